import { startServer, type RunningServer } from "@leasehold/server";
import { afterEach, describe, expect, it } from "vitest";
import { HttpLockService, LockClient, type LockResponse } from "../src/index.js";
import type { LockBatchLine } from "@leasehold/protocol";
import { captureLogger } from "./support/capture-logger.js";
import { CountingAgent } from "./support/counting-agent.js";
import { TEST_RETRY } from "./support/harness.js";
import { json, rawHttpServer } from "./support/raw-http-server.js";
import { tcpProxy } from "./support/tcp-proxy.js";

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
async function until(check: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await sleep(5);
  }
}
const ns = "batching";

function acquired(answer: LockResponse): Extract<LockResponse, { status: "acquired" }> {
  if (answer.status !== "acquired") throw new Error(`expected acquired, got ${JSON.stringify(answer)}`);
  return answer;
}

describe("lock batching over HTTP", () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  async function serve(): Promise<RunningServer> {
    const server = await startServer({});
    cleanups.push(() => server.close());
    return server;
  }

  function client(url: string, lockBatching: boolean, agent?: CountingAgent): LockClient {
    const c = LockClient.http({ baseUrl: url, namespace: ns, logger: captureLogger().logger, retry: TEST_RETRY, lockBatching, ...(agent && { dispatcher: agent }) });
    cleanups.push(async () => {
      await c.close();
      await agent?.close();
    });
    return c;
  }

  it("concurrent lock() calls leave in fewer HTTP calls than callers, none as a single lock", async () => {
    const server = await serve();
    const agent = new CountingAgent();
    const c = client(server.url, true, agent);
    const answers = await Promise.all(Array.from({ length: 64 }, (_, i) => c.lock([{ descriptor: `k-${i}`, mode: "exclusive" }])));
    for (const a of answers) acquired(a);
    expect(agent.count("lock")).toBe(0);
    expect(agent.count("lock-batch")).toBeGreaterThanOrEqual(1);
    expect(agent.count("lock-batch")).toBeLessThan(64);
    expect(server.service.snapshot(ns).heldTokens).toBe(64);
  });

  it("a lone caller on an idle client goes at once as a plain lock; calls made while it is out are batched", async () => {
    const server = await serve();
    const agent = new CountingAgent();
    const c = client(server.url, true, agent);
    acquired(await c.lock([{ descriptor: "alone", mode: "exclusive" }]));
    expect([agent.count("lock"), agent.count("lock-batch")]).toEqual([1, 0]);
    // One lone call waits on a held lock; the calls made meanwhile must not go one by one.
    const holder = client(server.url, false);
    const held = acquired(await holder.lock([{ descriptor: "held", mode: "exclusive" }]));
    const waiting = c.lock([{ descriptor: "held", mode: "exclusive" }], { acquireTimeoutMs: 10_000 });
    await until(() => server.service.snapshot(ns).waitingRequests === 1);
    expect(agent.count("lock")).toBe(2);
    const others = await Promise.all(Array.from({ length: 8 }, (_, i) => c.lock([{ descriptor: `o-${i}`, mode: "exclusive" }])));
    for (const a of others) acquired(a);
    expect(agent.count("lock")).toBe(2);
    expect(agent.count("lock-batch")).toBeGreaterThanOrEqual(1);
    holder.tryUnlock([held.token]);
    acquired(await waiting);
  });

  it("aborting a lone caller's wait abandons it on the server and holds nothing", async () => {
    const server = await serve();
    const holder = client(server.url, false);
    const held = acquired(await holder.lock([{ descriptor: "abort-me", mode: "exclusive" }]));
    const c = client(server.url, true);
    const controller = new AbortController();
    const waiting = c.lock([{ descriptor: "abort-me", mode: "exclusive" }], { acquireTimeoutMs: 10_000, signal: controller.signal });
    await until(() => server.service.snapshot(ns).waitingRequests === 1);
    const abandoned = server.service.metrics().abandonedTotal;
    controller.abort();
    await expect(waiting).rejects.toMatchObject({ code: "CANCELLED" });
    // The server abandoned the wait when the HTTP request was aborted, well before its 10 s timeout.
    await until(() => server.service.metrics().abandonedTotal === abandoned + 1);
    expect(server.service.snapshot(ns).waitingRequests).toBe(0);
    holder.tryUnlock([held.token]);
    await until(() => server.service.snapshot(ns).heldTokens === 0);
  });

  it("a waiting entry does not delay the answers of the others", async () => {
    const server = await serve();
    const holder = client(server.url, false);
    const held = acquired(await holder.lock([{ descriptor: "busy", mode: "exclusive" }]));
    const c = client(server.url, true);
    let waiterDone = false;
    const waiting = c.lock([{ descriptor: "busy", mode: "exclusive" }], { acquireTimeoutMs: 10_000 }).finally(() => (waiterDone = true));
    const started = performance.now();
    const others = await Promise.all(Array.from({ length: 8 }, (_, i) => c.lock([{ descriptor: `free-${i}`, mode: "exclusive" }])));
    for (const a of others) acquired(a);
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(waiterDone).toBe(false);
    holder.tryUnlock([held.token]);
    acquired(await waiting);
  });

  it("entries of a batch queue first-in-first-out in the order the client received them", async () => {
    const server = await serve();
    const holder = client(server.url, false);
    const held = acquired(await holder.lock([{ descriptor: "fifo", mode: "exclusive" }]));
    const c = client(server.url, true);
    const order: number[] = [];
    const waiters = Array.from({ length: 6 }, (_, i) =>
      c.lock([{ descriptor: "fifo", mode: "exclusive" }], { acquireTimeoutMs: 10_000 }).then((a) => {
        order.push(i);
        c.tryUnlock([acquired(a).token]);
      }),
    );
    await sleep(50);
    expect(server.service.snapshot(ns).waitingRequests).toBe(6);
    holder.tryUnlock([held.token]);
    await Promise.all(waiters);
    expect(order).toEqual([0, 1, 2, 3, 4, 5]);
  });

  it("aborting one entry cancels only that entry (lock-cancel); the rest of its batch goes on", async () => {
    const server = await serve();
    const holder = client(server.url, false);
    const x = acquired(await holder.lock([{ descriptor: "x", mode: "exclusive" }]));
    const y = acquired(await holder.lock([{ descriptor: "y", mode: "exclusive" }]));
    const agent = new CountingAgent();
    const c = client(server.url, true, agent);
    const abort = new AbortController();
    const aborted = c.lock([{ descriptor: "x", mode: "exclusive" }], { acquireTimeoutMs: 10_000, signal: abort.signal });
    const other = c.lock([{ descriptor: "y", mode: "exclusive" }], { acquireTimeoutMs: 10_000 });
    await sleep(50);
    expect(agent.count("lock-batch")).toBe(1);
    abort.abort();
    await expect(aborted).rejects.toMatchObject({ code: "CANCELLED" });
    await sleep(50);
    expect(agent.count("lock-cancel")).toBe(1);
    expect(server.service.snapshot(ns).waitingRequests).toBe(1); // only the one on y
    holder.tryUnlock([y.token]);
    acquired(await other);
    holder.tryUnlock([x.token]);
    await sleep(50);
    // Nothing of the aborted entry is held: x is free for a new caller.
    acquired(await holder.lock([{ descriptor: "x", mode: "exclusive" }]));
  });

  it("entries repeating a requestId are answered the same token (idempotency inside a batch)", async () => {
    const server = await serve();
    const c = client(server.url, true);
    const [a, b] = await Promise.all([
      c.lock([{ descriptor: "same", mode: "exclusive" }], { requestId: "rid-1" }),
      c.lock([{ descriptor: "same", mode: "exclusive" }], { requestId: "rid-1" }),
    ]);
    expect(acquired(a).token).toBe(acquired(b!).token);
    expect(server.service.snapshot(ns).heldTokens).toBe(1);
  });

  it("a batch whose connection is cut is retried entry by entry with the same requestIds, never acquiring twice", async () => {
    const server = await serve();
    const proxy = await tcpProxy(Number(new URL(server.url).port));
    cleanups.push(proxy.close);
    const c = client(proxy.url, true);
    proxy.dropAnswer("/lock-batch");
    const answers = await Promise.all(Array.from({ length: 5 }, (_, i) => c.lock([{ descriptor: `cut-${i}`, mode: "exclusive" }])));
    for (const a of answers) acquired(a);
    expect(proxy.forwarded("/lock-batch").length).toBe(1);
    // The batch's grants were kept by requestId and answered to the retries: 5, not 10.
    expect(server.service.snapshot(ns).heldTokens).toBe(5);
    await c.unlock(answers.map((a) => acquired(a).token));
    expect(server.service.snapshot(ns).heldTokens).toBe(0);
  });

  it("falls back to single lock calls, for good, on a server that answers 404 on lock-batch", async () => {
    let batches = 0;
    let singles = 0;
    let next = 1;
    const stub = await rawHttpServer((req, body, res) => {
      if (req.url?.endsWith("/lock-batch")) {
        batches++;
        json(res, 404, { error: { code: "NOT_FOUND", message: "no such route", details: {} } });
        return;
      }
      if (req.url?.endsWith("/lock")) {
        singles++;
        const { locks } = JSON.parse(body) as { locks: { descriptor: string; mode: "exclusive" }[] };
        json(res, 200, {
          status: "acquired",
          token: `t-${next}`,
          lease: { leaderId: "stub", validForMs: 60_000 },
          acquired: locks.map((l) => ({ descriptor: l.descriptor, mode: l.mode, fencingToken: next++ })),
        });
        return;
      }
      json(res, 200, {});
    });
    cleanups.push(stub.close);
    const c = client(stub.url, true);
    const answers = await Promise.all(Array.from({ length: 4 }, (_, i) => c.lock([{ descriptor: `d-${i}`, mode: "exclusive" }])));
    for (const a of answers) acquired(a);
    expect(batches).toBe(1);
    expect(singles).toBe(4);
    acquired(await c.lock([{ descriptor: "later", mode: "exclusive" }]));
    expect(batches).toBe(1);
    expect(singles).toBe(5);
  });

  it("HttpLockService.lockBatch parses lines split across chunks as they come, and rejects BAD_RESPONSE on garbage", async () => {
    const grant = { status: "acquired", token: "t-1", lease: { leaderId: "stub", validForMs: 5_000 }, acquired: [{ descriptor: "a", mode: "exclusive", fencingToken: 1 }] };
    const stub = await rawHttpServer((_req, _body, res) => {
      res.writeHead(200, { "content-type": "application/x-ndjson; charset=utf-8" });
      const line = JSON.stringify({ index: 1, result: grant }) + "\n";
      res.write(line.slice(0, 10));
      setTimeout(() => res.write(line.slice(10)), 20);
      setTimeout(() => res.end("{not json\n"), 60);
    });
    cleanups.push(stub.close);
    const http = new HttpLockService({ baseUrl: stub.url, retry: false });
    cleanups.push(() => http.close());
    const lines: LockBatchLine[] = [];
    const request = { requests: [{ requestId: "r0", locks: [{ descriptor: "b", mode: "exclusive" as const }] }, { requestId: "r1", locks: [{ descriptor: "a", mode: "exclusive" as const }] }] };
    await expect(http.lockBatch(ns, request, (line) => lines.push(line))).rejects.toMatchObject({ code: "BAD_RESPONSE" });
    expect(lines).toEqual([{ index: 1, result: grant }]);
  });
});
