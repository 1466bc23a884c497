import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { rowLock, type LockClient, type LostLock } from "../../src/index.js";
import type { Harness, HarnessFactory } from "./harness.js";
import { waitsAndLeasesSuite } from "./waits-and-leases-suite.js";

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function acquired<T extends { status: string }>(answer: T): Extract<T, { status: "acquired" }> {
  if (answer.status !== "acquired") throw new Error(`expected acquired, got ${JSON.stringify(answer)}`);
  return answer as Extract<T, { status: "acquired" }>;
}

async function until(check: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error("condition not reached in time");
    await sleep(5);
  }
}

/** The LockClient contract, written once, run against every backend. */
export function clientSuite(name: string, factory: HarnessFactory): void {
  waitsAndLeasesSuite(name, factory);
  describe(`LockClient contract (${name})`, () => {
    let h: Harness;
    let a: LockClient;
    let b: LockClient;
    beforeEach(async () => {
      h = await factory({ leaseMs: 2_000 });
      a = h.client();
      b = h.client();
    });
    afterEach(async () => {
      await h.close();
    });

    it("grants with fencing tokens; a conflicting request gets the timeout answer; unlock frees it", async () => {
      const spec = [{ descriptor: rowLock("orders", "o-17"), mode: "exclusive" as const }];
      const first = acquired(await a.lock(spec));
      expect(first.lease.validForMs).toBe(1_000);
      expect(first.acquired).toEqual([{ descriptor: spec[0]!.descriptor, mode: "exclusive", fencingToken: expect.any(Number) }]);
      await expect(b.lock(spec)).resolves.toEqual({ status: "timeout" });
      expect(await a.unlock([first.token])).toEqual([first.token]);
      const second = acquired(await b.lock(spec));
      expect(second.acquired[0]!.fencingToken).toBeGreaterThan(first.acquired[0]!.fencingToken);
    });

    it("a waiter is granted once the holder's tryUnlock is flushed", async () => {
      const spec = [{ descriptor: "doc-1", mode: "exclusive" as const }];
      const held = acquired(await a.lock(spec));
      const waiting = b.lock(spec, { acquireTimeoutMs: 5_000 });
      await sleep(30);
      const started = performance.now();
      a.tryUnlock([held.token]);
      expect(performance.now() - started).toBeLessThan(20);
      acquired(await waiting);
    });

    it("shared holders share; permits respect their limit; as-many-as-possible skips what is held", async () => {
      const s1 = acquired(await a.lock([{ descriptor: "doc", mode: "shared" }]));
      acquired(await b.lock([{ descriptor: "doc", mode: "shared" }]));
      await expect(b.lock([{ descriptor: "doc", mode: "exclusive" }])).resolves.toEqual({ status: "timeout" });
      expect(s1.acquired[0]!.mode).toBe("shared");
      const permit = [{ descriptor: "job", mode: "permit" as const, limit: 2 }];
      acquired(await a.lock(permit));
      acquired(await b.lock(permit));
      await expect(a.lock(permit)).resolves.toEqual({ status: "timeout" });
      acquired(await a.lock([{ descriptor: "q-2", mode: "exclusive" }]));
      const claim = acquired(
        await b.lock(
          ["q-1", "q-2", "q-3", "q-4"].map((descriptor) => ({ descriptor, mode: "exclusive" as const })),
          { behavior: "as-many-as-possible", max: 2 },
        ),
      );
      expect(claim.acquired.map((l) => l.descriptor)).toEqual(["q-1", "q-3"]);
    });

    it("aborting a waiting lock rejects with CANCELLED and leaves nothing held or queued", async () => {
      const spec = [{ descriptor: "abort-me", mode: "exclusive" as const }];
      const held = acquired(await a.lock(spec));
      const controller = new AbortController();
      const waiting = b.lock(spec, { acquireTimeoutMs: 10_000, signal: controller.signal });
      await until(() => h.service.snapshot("suite").waitingRequests === 1);
      controller.abort();
      await expect(waiting).rejects.toMatchObject({ code: "CANCELLED" });
      await until(() => h.service.snapshot("suite").waitingRequests === 0);
      await a.unlock([held.token]);
      await sleep(50); // a racing grant, if any, is released in the background
      await until(() => h.service.snapshot("suite").heldTokens === 0);
    });

    it("bad requests are INVALID_ARGUMENT from the service", async () => {
      await expect(
        a.lock([
          { descriptor: "dup", mode: "exclusive" },
          { descriptor: "dup", mode: "shared" },
        ]),
      ).rejects.toMatchObject({ name: "LeaseholdError", code: "INVALID_ARGUMENT" });
      await expect(a.lock([{ descriptor: "x", mode: "exclusive" }], { acquireTimeoutMs: -1 })).rejects.toMatchObject({
        code: "INVALID_ARGUMENT",
      });
    });

    it("bad arguments reject the returned promise (never a synchronous throw), say where, and hold nothing", async () => {
      const calls: Array<[string, () => Promise<unknown>, string]> = [
        ["locks null", () => a.lock(null as never), "locks"],
        ["locks a string", () => a.lock("x" as never), "locks"],
        ["timeout a string", () => a.lock([{ descriptor: "x", mode: "exclusive" }], { acquireTimeoutMs: "5" as never }), "acquireTimeoutMs"],
        ["timeout NaN", () => a.lock([{ descriptor: "x", mode: "exclusive" }], { acquireTimeoutMs: Number.NaN }), "acquireTimeoutMs"],
      ];
      for (const [what, call, path] of calls) {
        let pending: Promise<unknown> | undefined;
        expect(() => (pending = call()), what).not.toThrow();
        await expect(pending, what).rejects.toMatchObject({ name: "LeaseholdError", code: "INVALID_ARGUMENT", details: { path } });
      }
      expect(h.service.snapshot("suite").heldTokens).toBe(0);
    });

    it("timestamps strictly increase and fence above fencing tokens; transactions hold the immutable timestamp", async () => {
      const lock = acquired(await a.lock([{ descriptor: "f", mode: "exclusive" }]));
      const t1 = await a.freshTimestamp();
      expect(t1).toBeGreaterThan(lock.acquired[0]!.fencingToken);
      const range = await b.freshTimestamps(100);
      expect(range.count).toBe(100);
      expect(range.start).toBeGreaterThan(t1);
      const txn = await a.startTransaction();
      expect(txn.startTimestamp).toBeGreaterThan(range.start + 99);
      expect(await b.immutableTimestamp()).toBe(txn.startTimestamp);
      a.tryUnlock([txn.token]);
      await a.close();
      expect(h.service.snapshot("suite").immutableLocks).toEqual([]);
      expect(await b.immutableTimestamp()).toBeGreaterThan(txn.startTimestamp);
    });

    it("close() sends every pending tryUnlock before it resolves", async () => {
      const tokens: string[] = [];
      for (let i = 0; i < 50; i++) tokens.push(acquired(await a.lock([{ descriptor: `c-${i}`, mode: "exclusive" }])).token);
      for (const t of tokens) a.tryUnlock([t]);
      await a.close();
      expect(h.service.snapshot("suite").heldTokens).toBe(0);
      expect(a.stats().tokensEnqueued).toBe(50);
      await expect(a.lock([{ descriptor: "late", mode: "exclusive" }])).rejects.toMatchObject({ code: "UNAVAILABLE" });
    });

    it("the refresher keeps a lock alive well past the server's lease", async () => {
      const lost: LostLock[] = [];
      a.lostLocks.subscribe((l) => lost.push(l));
      const spec = [{ descriptor: "kept", mode: "exclusive" as const }];
      const held = acquired(await a.lock(spec));
      await sleep(3_000); // leaseMs is 2,000
      await expect(b.lock(spec)).resolves.toEqual({ status: "timeout" });
      expect(lost).toEqual([]);
      expect(a.stats().refreshCalls).toBeGreaterThanOrEqual(4);
      expect((await a.refresh([held.token])).refreshed).toEqual([held.token]);
    });

    it("withLock runs the work while holding, releases after, and passes through errors and timeouts", async () => {
      const spec = [{ descriptor: "w", mode: "exclusive" as const }];
      const result = await a.withLock(spec, {}, async (signal, lock) => {
        expect(signal.aborted).toBe(false);
        await expect(b.lock(spec)).resolves.toEqual({ status: "timeout" });
        expect(await b.withLock(spec, {}, () => "never")).toEqual({ status: "timeout" });
        return lock.acquired[0]!.fencingToken;
      });
      expect(result).toMatchObject({ status: "acquired", value: expect.any(Number) });
      const after = acquired(await b.lock(spec, { acquireTimeoutMs: 2_000 }));
      await b.unlock([after.token]);
      await expect(
        a.withLock(spec, {}, () => {
          throw new Error("boom");
        }),
      ).rejects.toThrow("boom");
      acquired(await b.lock(spec, { acquireTimeoutMs: 2_000 }));
    });

    it("refreshIntervalMs never stretches refreshes past half the lease", async () => {
      // Asked for one refresh a minute, the client still refreshes every half lease (500 ms here):
      // the lock outlives a 2 s server lease and a waiter never gets it.
      const slow = h.client({ refreshIntervalMs: 60_000, maxTenureMs: 60_000 });
      const lost: LostLock[] = [];
      slow.lostLocks.subscribe((l) => lost.push(l));
      const held = acquired(await slow.lock([{ descriptor: "lapse", mode: "exclusive" }]));
      const other = b.lock([{ descriptor: "lapse", mode: "exclusive" }], { acquireTimeoutMs: 2_500 });
      await expect(other).resolves.toEqual({ status: "timeout" });
      expect(lost).toEqual([]);
      await slow.unlock([held.token]);
    });
  });
}
