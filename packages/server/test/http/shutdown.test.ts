import { Writable } from "node:stream";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { startServer } from "../../src/start-server.js";
import { errorOf, rawRequest } from "../support/raw-request.js";
import { waitFor } from "../support/wait-for.js";

const json = { "content-type": "application/json" };

function memoryLogger(): { logger: pino.Logger; lines: () => Record<string, unknown>[] } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk.toString());
      done();
    },
  });
  return {
    logger: pino({ level: "info" }, stream),
    lines: () => chunks.join("").split("\n").filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>),
  };
}

describe("startServer / close()", () => {
  it("binds loopback by default and logs one listening line with the url, nothing per request", async () => {
    const { logger, lines } = memoryLogger();
    const server = await startServer({ logger });
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    await rawRequest(server.url, "/v1/namespaces/log/timestamps", { body: '{"count":1}', headers: json });
    await server.close();
    const messages = lines().map((l) => l.msg);
    expect(messages).toEqual(["listening", "stopped"]);
    expect(lines()[0]).toMatchObject({ msg: "listening", url: server.url, leaderId: server.service.leaderId });
  });

  it("answers waiting lock requests 503 UNAVAILABLE, closes idle keep-alive sockets and resolves", async () => {
    const server = await startServer();
    const ns = "shutdown";
    await rawRequest(server.url, `/v1/namespaces/${ns}/lock`, { body: '{"locks":[{"descriptor":"d","mode":"exclusive"}]}', headers: json });
    const waiters = Array.from({ length: 5 }, () =>
      rawRequest(server.url, `/v1/namespaces/${ns}/lock`, { body: '{"locks":[{"descriptor":"d","mode":"exclusive"}],"acquireTimeoutMs":60000}', headers: json }),
    );
    await waitFor(() => server.service.snapshot(ns).waitingRequests === 5, "5 waiters");
    // A keep-alive connection left idle in fetch's pool must not hold close() up.
    expect((await fetch(`${server.url}/v1/health`)).status).toBe(200);

    const started = Date.now();
    await server.close();
    expect(Date.now() - started).toBeLessThan(2_000);
    for (const answer of await Promise.all(waiters)) {
      expect(answer.status).toBe(503);
      expect(errorOf(answer).code).toBe("UNAVAILABLE");
      expect(answer.headers.connection).toBe("close");
    }
    await expect(fetch(`${server.url}/v1/health`)).rejects.toThrow();
    await server.close(); // idempotent
  });

  it("refuses to start on a port in use, without leaking a service", async () => {
    const first = await startServer();
    const port = Number(new URL(first.url).port);
    await expect(startServer({ port })).rejects.toThrow(/EADDRINUSE/);
    await first.close();
  });
});
