import { createServer } from "node:net";
import { Agent } from "undici";
import { afterEach, describe, expect, it } from "vitest";
import { HttpLockService } from "../src/index.js";
import { json, rawHttpServer } from "./support/raw-http-server.js";

const fastRetry = { maxRetries: 3, minTimeoutMs: 10, maxTimeoutMs: 50 } as const;
const lease = { leaderId: "L", validForMs: 1000 };
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

async function serve(handler: Parameters<typeof rawHttpServer>[0]) {
  const server = await rawHttpServer(handler);
  const service = new HttpLockService({ baseUrl: server.url, retry: fastRetry });
  cleanups.push(() => service.close(), server.close);
  return { server, service };
}

describe("HttpLockService", () => {
  it("posts JSON to the operation's route and checks the answer", async () => {
    const seen: string[] = [];
    const { service } = await serve((req, body, res) => {
      seen.push(`${req.method} ${req.url} ${req.headers["content-type"]} ${body}`);
      json(res, 200, { start: 5, count: 2 });
    });
    await expect(service.timestamps("my-ns", { count: 2 })).resolves.toEqual({ start: 5, count: 2 });
    expect(seen).toEqual(['POST /v1/namespaces/my-ns/timestamps application/json {"count":2}']);
  });

  it("turns an error body back into a LeaseholdError, and never retries a 4xx", async () => {
    const { server, service } = await serve((_req, _body, res) =>
      json(res, 400, { error: { code: "INVALID_ARGUMENT", message: "count must be between 1 and 10000", details: { path: "count" } } }),
    );
    await expect(service.timestamps("ns", { count: 0 })).rejects.toMatchObject({
      name: "LeaseholdError",
      code: "INVALID_ARGUMENT",
      message: "count must be between 1 and 10000",
      details: { path: "count" },
    });
    expect(server.attempts()).toBe(1);
  });

  it("answers that are not JSON or not the protocol are BAD_RESPONSE", async () => {
    const { service } = await serve((req, _body, res) => {
      if (req.url?.endsWith("timestamps")) {
        res.writeHead(200, { "content-type": "application/json" });
        res.end("{nope");
      } else if (req.url?.endsWith("unlock")) json(res, 200, { unlocked: "all" });
      else {
        res.writeHead(418);
        res.end("teapot");
      }
    });
    await expect(service.timestamps("ns", { count: 1 })).rejects.toMatchObject({ code: "BAD_RESPONSE" });
    await expect(service.unlock("ns", { tokens: ["t"] })).rejects.toMatchObject({ code: "BAD_RESPONSE" });
    await expect(service.refresh("ns", { tokens: ["t"] })).rejects.toMatchObject({ code: "BAD_RESPONSE" });
  });

  it("retries 503 with backoff, then succeeds; gives up with the last error body", async () => {
    const { server, service } = await serve((_req, _body, res, attempt) => {
      if (attempt < 3) json(res, 503, { error: { code: "UNAVAILABLE", message: "busy", details: {} } });
      else json(res, 200, { refreshed: [], lease });
    });
    await expect(service.refresh("ns", { tokens: ["t"] })).resolves.toEqual({ refreshed: [], lease });
    expect(server.attempts()).toBe(3);

    const down = await serve((_req, _body, res) => json(res, 503, { error: { code: "UNAVAILABLE", message: "shutting down", details: {} } }));
    await expect(down.service.refresh("ns", { tokens: ["t"] })).rejects.toMatchObject({ code: "UNAVAILABLE", message: "shutting down" });
    expect(down.server.attempts()).toBe(fastRetry.maxRetries + 1);
  });

  it("retries a lock only when it carries a requestId", async () => {
    const { server, service } = await serve((_req, _body, res) => json(res, 503, { error: { code: "UNAVAILABLE", message: "x", details: {} } }));
    const locks = [{ descriptor: "d", mode: "exclusive" as const }];
    await expect(service.lock("ns", { locks })).rejects.toMatchObject({ code: "UNAVAILABLE" });
    expect(server.attempts()).toBe(1);
    await expect(service.lock("ns", { locks, requestId: "r-1" })).rejects.toMatchObject({ code: "UNAVAILABLE" });
    expect(server.attempts()).toBe(1 + fastRetry.maxRetries + 1);
  });

  it("retries a connection reset and the retry carries the same body", async () => {
    const bodies: string[] = [];
    const { server, service } = await serve((_req, body, res, attempt) => {
      bodies.push(body);
      if (attempt === 1) res.socket?.destroy();
      else json(res, 200, { status: "timeout" });
    });
    await expect(service.lock("ns", { locks: [{ descriptor: "d", mode: "exclusive" }], requestId: "same" })).resolves.toEqual({ status: "timeout" });
    expect(server.attempts()).toBe(2);
    expect(bodies[0]).toBe(bodies[1]);
  });

  it("a refused connection is UNAVAILABLE (after the retries)", async () => {
    const probe = createServer();
    await new Promise<void>((r) => probe.listen(0, "127.0.0.1", r));
    const port = (probe.address() as { port: number }).port;
    await new Promise<void>((r) => probe.close(() => r()));
    const service = new HttpLockService({ baseUrl: `http://127.0.0.1:${port}`, retry: fastRetry });
    await expect(service.timestamps("ns", { count: 1 })).rejects.toMatchObject({ code: "UNAVAILABLE" });
    await service.close();
  });

  it("the caller's abort is CANCELLED", async () => {
    const { service } = await serve(() => undefined); // never answers
    const controller = new AbortController();
    const call = service.lock("ns", { locks: [{ descriptor: "d", mode: "exclusive" }], requestId: "r", acquireTimeoutMs: 5000 }, { signal: controller.signal });
    setTimeout(() => controller.abort(), 20);
    await expect(call).rejects.toMatchObject({ code: "CANCELLED" });
  });

  it("an abort rejects at once even while the request still waits for a free connection", async () => {
    const server = await rawHttpServer(() => undefined); // never answers: the one connection stays busy
    const agent = new Agent({ connections: 1 });
    const service = new HttpLockService({ baseUrl: server.url, dispatcher: agent, retry: fastRetry });
    cleanups.push(() => service.close(), () => agent.destroy(), server.close);
    const busy = service.timestamps("ns", { count: 1 }).catch((err: unknown) => err);
    await new Promise((r) => setTimeout(r, 50));
    const controller = new AbortController();
    const queued = service.timestamps("ns", { count: 1 }, { signal: controller.signal });
    const started = performance.now();
    setTimeout(() => controller.abort(), 20);
    await expect(queued).rejects.toMatchObject({ code: "CANCELLED" });
    // Well before the busy request's 10 s headers timeout would free the connection.
    expect(performance.now() - started).toBeLessThan(2_000);
    void busy;
  });

  it("uses an injected dispatcher and leaves it open on close", async () => {
    const server = await rawHttpServer((_req, _body, res) => json(res, 200, { status: "ok", leaderId: "L", version: "1" }));
    cleanups.push(server.close);
    const agent = new Agent();
    const service = new HttpLockService({ baseUrl: server.url, dispatcher: agent });
    await expect(service.health()).resolves.toMatchObject({ leaderId: "L" });
    await service.close();
    expect(agent.closed).toBe(false);
    await expect(new HttpLockService({ baseUrl: server.url, dispatcher: agent }).health()).resolves.toMatchObject({ status: "ok" });
    await agent.close();
  });
});
