import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { ClientRequest } from "node:http";
import { Writable } from "node:stream";
import { pino } from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createRequestHandler } from "../../src/http/create-request-handler.js";
import { createServerMetrics } from "../../src/metrics/server-metrics.js";
import { FakeLockService } from "../support/fake-lock-service.js";
import { errorOf, rawRequest } from "../support/raw-request.js";
import { sleep, waitFor } from "../support/wait-for.js";

const json = { "content-type": "application/json" };
const granted = (token: string) => ({
  status: "acquired" as const,
  token,
  lease: { leaderId: "fake-leader", validForMs: 1000 },
  acquired: [{ descriptor: "d", mode: "exclusive" as const, fencingToken: 7 }],
});

describe("HTTP: grants that cannot be delivered, and server bugs", () => {
  let service: FakeLockService;
  let server: Server;
  let url: string;
  let logged: Record<string, unknown>[];

  beforeEach(async () => {
    service = new FakeLockService();
    logged = [];
    const stream = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString().split("\n").filter(Boolean)) logged.push(JSON.parse(line) as Record<string, unknown>);
        done();
      },
    });
    const metrics = createServerMetrics(() => service.metrics(), { version: "test", leaderId: service.leaderId });
    server = createServer(createRequestHandler({ service, metrics, logger: pino({ level: "info" }, stream), isClosing: () => false }));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterEach(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  /** Send a lock request, drop the connection before the (slow) grant lands. */
  async function grantAfterDisconnect(body: object): Promise<void> {
    let release!: () => void;
    const landed = new Promise<void>((r) => (release = r));
    service.onLock = async () => {
      await landed;
      return granted("tok-secret");
    };
    let req: ClientRequest | undefined;
    const answer = rawRequest(url, "/v1/namespaces/ns/lock", { body: JSON.stringify(body), headers: json, onRequest: (r) => (req = r) });
    answer.catch(() => undefined);
    await sleep(50);
    req?.destroy();
    await sleep(50);
    release();
    await sleep(50);
  }

  it("unlocks a grant whose client left before the answer was written", async () => {
    await grantAfterDisconnect({ locks: [{ descriptor: "d", mode: "exclusive" }], acquireTimeoutMs: 1000 });
    await waitFor(() => service.unlocked.length === 1, "the undelivered token to be unlocked");
    expect(service.unlocked).toEqual([["tok-secret"]]);
    expect(JSON.stringify(logged)).not.toContain("tok-secret");
  });

  it("leaves a grant with a requestId to its lease: a retry may already hold the same token", async () => {
    await grantAfterDisconnect({ requestId: "r1", locks: [{ descriptor: "d", mode: "exclusive" }], acquireTimeoutMs: 1000 });
    expect(service.unlocked).toEqual([]);
  });

  it("answers an unexpected exception 500 INTERNAL with a generic message, logged at error", async () => {
    service.onTimestamps = () => Promise.reject(new TypeError("cannot read properties of undefined (secret internals)"));
    const res = await rawRequest(url, "/v1/namespaces/ns/timestamps", { body: '{"count":1}', headers: json });
    expect(res.status).toBe(500);
    const error = errorOf(res);
    expect(error.code).toBe("INTERNAL");
    expect(error.message).not.toContain("secret internals");
    const entry = logged.find((l) => l.level === 50);
    expect(entry).toMatchObject({ incident: error.details.incident });
    // The next request is served normally.
    service.onTimestamps = () => Promise.resolve({ start: 5, count: 1 });
    expect((await rawRequest(url, "/v1/namespaces/ns/timestamps", { body: '{"count":1}', headers: json })).json).toEqual({ start: 5, count: 1 });
  });

  it("counts a request whose client left as status 499 in the metrics", async () => {
    await grantAfterDisconnect({ locks: [{ descriptor: "d", mode: "exclusive" }] });
    const scrape = await rawRequest(url, "/metrics", { method: "GET" });
    expect(scrape.text).toContain('leasehold_requests_total{operation="lock",status="499"} 1');
  });
});
