import type { CallOptions, LockBatchRequest, LockBatchResultListener, LockCancelRequest, LockCancelResponse, LockRequest, LockResponse } from "@leasehold/protocol";
import { LIMITS } from "@leasehold/protocol";
import { startServer, type RunningServer } from "@leasehold/server";
import { afterEach, describe, expect, it } from "vitest";
import { entriesThatFit } from "../src/batch-fit.js";
import { LockClient } from "../src/index.js";
import { captureLogger } from "./support/capture-logger.js";
import { CountingAgent } from "./support/counting-agent.js";
import { FakeLockService } from "./support/fake-lock-service.js";
import { TEST_RETRY } from "./support/harness.js";

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** A fake service with lock batches that runs each entry through its own `lock` and records everything. */
class BatchingFake extends FakeLockService {
  readonly batches: LockRequest[][] = [];
  readonly cancels: string[] = [];
  readonly singles: LockRequest[] = [];
  override lock(ns: string, request: LockRequest, options?: CallOptions): Promise<LockResponse> {
    this.singles.push(request);
    return super.lock(ns, request, options);
  }
  async lockBatch(ns: string, body: LockBatchRequest, onResult: LockBatchResultListener, options?: CallOptions): Promise<void> {
    this.batches.push([...body.requests]);
    await Promise.all(
      body.requests.map(async (request, index) => {
        try {
          onResult({ index, result: await this.entry(ns, request, options) });
        } catch (err) {
          onResult({ index, error: { code: "CANCELLED", message: String(err), details: {} } });
        }
      }),
    );
  }
  /** How one entry of a batch is answered; tests override it. */
  entry(ns: string, request: LockRequest, options?: CallOptions): Promise<LockResponse> {
    return super.lock(ns, request, options);
  }
  async cancelLock(_ns: string, request: LockCancelRequest): Promise<LockCancelResponse> {
    this.cancels.push(request.requestId);
    return { cancelled: true };
  }
}

describe("lock batching keeps every per-request guarantee", () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  it("a wait longer than 60 s goes as batched polls of at most 60 s, all with one requestId", async () => {
    let clock = 0;
    const service = new (class extends BatchingFake {
      override async entry(_ns: string, request: LockRequest): Promise<LockResponse> {
        clock += request.acquireTimeoutMs ?? 0; // the server waited the whole poll, in vain
        return { status: "timeout" };
      }
    })();
    const client = LockClient.embedded(service, { namespace: "ns", logger: captureLogger().logger, now: () => clock, lockBatching: true });
    cleanups.push(() => client.close());
    const answer = await client.lock([{ descriptor: "d", mode: "exclusive" }], { acquireTimeoutMs: 150_000 });
    expect(answer).toEqual({ status: "timeout" });
    const polls = service.batches.flat();
    expect(polls.map((r) => r.acquireTimeoutMs)).toEqual([60_000, 60_000, 30_000]);
    expect(new Set(polls.map((r) => r.requestId)).size).toBe(1);
    expect(service.singles).toEqual([]);
  });

  it("an abort while batched sends lock-cancel, never a re-sent lock, and releases a grant that arrives after it", async () => {
    let crossing: ((answer: LockResponse) => void) | undefined;
    const service = new (class extends BatchingFake {
      override entry(ns: string, request: LockRequest, options?: CallOptions): Promise<LockResponse> {
        // The first entry hangs, as a waiter would, and is answered by the test after the abort.
        if (crossing === undefined) return new Promise((resolve) => (crossing = resolve));
        return super.entry(ns, request, options);
      }
    })();
    const client = LockClient.embedded(service, { namespace: "ns", logger: captureLogger().logger, lockBatching: true });
    cleanups.push(() => client.close());
    const abort = new AbortController();
    const waiting = client.lock([{ descriptor: "x", mode: "exclusive" }], { acquireTimeoutMs: 10_000, signal: abort.signal });
    await sleep(10);
    expect(crossing).toBeDefined();
    abort.abort();
    await expect(waiting).rejects.toMatchObject({ code: "CANCELLED" });
    await sleep(20);
    const requestId = service.batches[0]![0]!.requestId!;
    expect(service.cancels).toEqual([requestId]);
    // No probe: a re-sent lock with that id could join the very wait being given up.
    expect(service.batches.flat()).toHaveLength(1);
    expect(service.singles).toEqual([]);
    // The grant crosses the abort and arrives now: it is given back.
    crossing!({ status: "acquired", token: "crossed", lease: { leaderId: service.leaderId, validForMs: 5_000 }, acquired: [{ descriptor: "x", mode: "exclusive", fencingToken: 7 }] });
    await sleep(10);
    await client.close();
    expect(service.unlockedTokens).toEqual(["crossed"]);
  });

  it("acquireTimeoutMs ends a batched wait with a timeout answer while the rest of its batch is granted", async () => {
    const server: RunningServer = await startServer({});
    cleanups.push(() => server.close());
    const holder = LockClient.http({ baseUrl: server.url, namespace: "ns", logger: captureLogger().logger, retry: TEST_RETRY });
    const c = LockClient.http({ baseUrl: server.url, namespace: "ns", logger: captureLogger().logger, retry: TEST_RETRY, lockBatching: true });
    cleanups.push(() => holder.close(), () => c.close());
    const held = await holder.lock([{ descriptor: "busy", mode: "exclusive" }]);
    expect(held.status).toBe("acquired");
    const started = performance.now();
    const [timedOut, free] = await Promise.all([
      c.lock([{ descriptor: "busy", mode: "exclusive" }], { acquireTimeoutMs: 300 }),
      c.lock([{ descriptor: "free", mode: "exclusive" }], { acquireTimeoutMs: 300 }),
    ]);
    const waited = performance.now() - started;
    expect(timedOut).toEqual({ status: "timeout" });
    expect(free.status).toBe("acquired");
    expect(waited).toBeGreaterThanOrEqual(290);
    expect(server.service.snapshot("ns").waitingRequests).toBe(0);
  });

  it("a batch never exceeds the 1 MiB body limit: large entries are split across calls, none refused", async () => {
    const server: RunningServer = await startServer({});
    cleanups.push(() => server.close());
    const agent = new CountingAgent();
    const c = LockClient.http({ baseUrl: server.url, namespace: "big", logger: captureLogger().logger, retry: TEST_RETRY, lockBatching: true, dispatcher: agent });
    cleanups.push(async () => {
      await c.close();
      await agent.close();
    });
    // Each request: 400 locks on 1,000-byte descriptors, about 420 KB; five of them are about 2 MB.
    const request = (n: number) => Array.from({ length: 400 }, (_, i) => ({ descriptor: `${n}-${i}-`.padEnd(1000, "x"), mode: "exclusive" as const }));
    const answers = await Promise.all(Array.from({ length: 5 }, (_, n) => c.lock(request(n))));
    for (const a of answers) expect(a.status).toBe("acquired");
    expect(agent.count("lock-batch")).toBeGreaterThanOrEqual(3);
    expect(agent.count("lock")).toBe(0);
    expect(server.service.snapshot("big").heldTokens).toBe(5);
  });

  it("entriesThatFit cuts exactly at the byte limit, and lets an oversize entry leave alone", () => {
    const entry = (bytes: number) => ({ request: { requestId: "r", locks: [{ descriptor: "é".repeat(bytes / 2), mode: "exclusive" as const }] } });
    const size = (e: ReturnType<typeof entry>) => Buffer.byteLength(JSON.stringify(e.request));
    const entries = [entry(400_000), entry(400_000), entry(400_000)];
    const fit = entriesThatFit(entries, 3);
    const body = Buffer.byteLength(JSON.stringify({ requests: entries.slice(0, fit).map((e) => e.request) }));
    expect(fit).toBe(2);
    expect(body).toBeLessThanOrEqual(LIMITS.maxBodyBytes);
    const withThird = Buffer.byteLength(JSON.stringify({ requests: entries.map((e) => e.request) }));
    expect(withThird).toBeGreaterThan(LIMITS.maxBodyBytes);
    expect(entriesThatFit([entry(2_000_000)], 1)).toBe(1);
    expect(size(entries[0]!)).toBeGreaterThan(400_000);
    // Small entries are settled by the cheap bound: all 1,000 fit.
    expect(entriesThatFit(Array.from({ length: 1_000 }, () => entry(20)), 1_000)).toBe(1_000);
  });
});
