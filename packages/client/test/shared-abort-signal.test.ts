import { getEventListeners } from "node:events";
import { afterEach, describe, expect, it } from "vitest";
import { embeddedHarness, httpBatchedHarness, httpHarness, type Harness, type HarnessFactory } from "./support/harness.js";

// One AbortSignal shared by many waiting calls (a shutdown signal): every call must listen to it
// without Node's MaxListenersExceededWarning (its threshold is 10 listeners on one signal), and
// aborting it must still end every call. Real waits: a holder keeps the lock, 200 callers queue.

const CALLS = 200;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function until(check: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error("condition not reached in time");
    await sleep(5);
  }
}

let harness: Harness | undefined;
let shutdown = new AbortController();
const warnings: Error[] = [];
const onWarning = (warning: Error): void => void warnings.push(warning);
afterEach(async () => {
  process.off("warning", onWarning);
  warnings.length = 0;
  shutdown.abort(); // a failed test must not leave 200 calls waiting 30 s
  shutdown = new AbortController();
  await harness?.close();
  harness = undefined;
});

const backends: [string, HarnessFactory, number][] = [
  // Over plain HTTP the client's agent has 128 connections: the rest of the 200 wait for one in
  // undici's queue, still listening to the signal, so at least 100 must be waiting on the server.
  ["embedded", embeddedHarness, CALLS],
  ["http", httpHarness, 100],
  ["http+lockBatching", httpBatchedHarness, CALLS],
];

describe("200 waiting calls sharing one AbortSignal", () => {
  for (const [name, factory, onServer] of backends) {
    it(`${name}: no MaxListenersExceededWarning, and one abort ends all of them`, async () => {
      process.on("warning", onWarning);
      const h = (harness = await factory({ leaseMs: 30_000 }));
      const holder = h.client();
      const waiter = h.client();
      const spec = [{ descriptor: "shared-signal", mode: "exclusive" as const }];
      const held = await holder.lock(spec);
      expect(held.status).toBe("acquired");

      const calls = Array.from({ length: CALLS }, () => waiter.lock(spec, { acquireTimeoutMs: 30_000, signal: shutdown.signal }));
      const settled = Promise.allSettled(calls);
      await until(() => h.service.snapshot("suite").waitingRequests >= onServer);
      await sleep(50); // a warning is emitted on a later tick than the listener that causes it

      expect(warnings.filter((w) => w.name === "MaxListenersExceededWarning").map((w) => w.message)).toEqual([]);
      // The signal itself has a handful of listeners (one per layer that listens), not one per call.
      expect(getEventListeners(shutdown.signal, "abort").length).toBeLessThanOrEqual(5);

      shutdown.abort();
      const outcomes = await settled;
      expect(outcomes.filter((o) => o.status === "rejected" && (o.reason as { code?: unknown }).code === "CANCELLED")).toHaveLength(CALLS);
      await until(() => h.service.snapshot("suite").waitingRequests === 0);
      // Every listener is gone once the calls have ended.
      expect(getEventListeners(shutdown.signal, "abort")).toEqual([]);
      if (held.status === "acquired") await holder.unlock([held.token]);
      expect(warnings.filter((w) => w.name === "MaxListenersExceededWarning").map((w) => w.message)).toEqual([]);
    });
  }

  it("embedded service (server side): 200 direct waits on one signal, one listener, all cancelled", async () => {
    process.on("warning", onWarning);
    const h = (harness = await embeddedHarness({ leaseMs: 30_000 }));
    const lock = { descriptor: "direct", mode: "exclusive" as const };
    const held = await h.service.lock("suite", { locks: [lock] });
    expect(held.status).toBe("acquired");
    const calls = Array.from({ length: CALLS }, (_, i) =>
      h.service.lock("suite", { requestId: `direct-${i}`, locks: [lock], acquireTimeoutMs: 30_000 }, { signal: shutdown.signal }),
    );
    const settled = Promise.allSettled(calls);
    await until(() => h.service.snapshot("suite").waitingRequests === CALLS);
    await sleep(50);
    expect(getEventListeners(shutdown.signal, "abort").length).toBe(1);
    expect(warnings.filter((w) => w.name === "MaxListenersExceededWarning").map((w) => w.message)).toEqual([]);
    shutdown.abort();
    const outcomes = await settled;
    expect(outcomes.filter((o) => o.status === "rejected" && (o.reason as { code?: unknown }).code === "CANCELLED")).toHaveLength(CALLS);
    expect(h.service.snapshot("suite").waitingRequests).toBe(0);
  });

  it("a call that ends before the abort stops listening; the others still end on abort", async () => {
    const h = (harness = await embeddedHarness({ leaseMs: 30_000 }));
    const lock = { descriptor: "partial", mode: "exclusive" as const };
    const held = await h.service.lock("suite", { locks: [lock] });
    if (held.status !== "acquired") throw new Error("not acquired");
    const calls = Array.from({ length: 20 }, (_, i) =>
      h.service.lock("suite", { requestId: `partial-${i}`, locks: [lock], acquireTimeoutMs: 30_000 }, { signal: shutdown.signal }),
    );
    await until(() => h.service.snapshot("suite").waitingRequests === 20);
    // The first waiter is granted when the holder lets go: it must no longer be aborted by the signal.
    await h.service.unlock("suite", { tokens: [held.token] });
    const first = await calls[0]!;
    expect(first.status).toBe("acquired");
    shutdown.abort();
    const rest = await Promise.allSettled(calls.slice(1));
    expect(rest.every((o) => o.status === "rejected" && (o.reason as { code?: unknown }).code === "CANCELLED")).toBe(true);
    expect(h.service.snapshot("suite").heldTokens).toBe(1);
    expect(getEventListeners(shutdown.signal, "abort")).toEqual([]);
  });
});
