import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { LockClient } from "../../src/index.js";
import type { Harness, HarnessFactory } from "./harness.js";

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function until(check: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error("condition not reached in time");
    await sleep(5);
  }
}

/** `waitForLocks` and timestamp leases through `LockClient`, against every backend. */
export function waitsAndLeasesSuite(name: string, factory: HarnessFactory): void {
  describe(`LockClient waitForLocks and timestamp leases (${name})`, () => {
    let h: Harness;
    let a: LockClient;
    let b: LockClient;
    beforeEach(async () => {
      h = await factory({ leaseMs: 1_000 });
      a = h.client();
      b = h.client();
    });
    afterEach(async () => {
      await h.close();
    });

    it("waitForLocks answers free once the holder releases, acquiring nothing; timeout at its deadline", async () => {
      const spec = [{ descriptor: "doc-w", mode: "exclusive" as const }];
      expect(await b.waitForLocks(spec)).toEqual({ status: "free" });
      const held = await a.lock(spec);
      if (held.status !== "acquired") throw new Error("not acquired");
      expect(await b.waitForLocks(spec, { acquireTimeoutMs: 100 })).toEqual({ status: "timeout" });
      let settled = false;
      const waiting = b.waitForLocks(spec, { acquireTimeoutMs: 5_000 }).finally(() => (settled = true));
      await until(() => h.service.snapshot("suite").waitingRequests === 1);
      await sleep(30);
      expect(settled).toBe(false);
      a.tryUnlock([held.token]);
      expect(await waiting).toEqual({ status: "free" });
      expect(h.service.snapshot("suite").heldTokens).toBe(0);
    });

    it("an aborted waitForLocks rejects CANCELLED and leaves the server's queue", async () => {
      const spec = [{ descriptor: "doc-a", mode: "shared" as const }];
      const held = await a.lock([{ descriptor: "doc-a", mode: "exclusive" }]);
      if (held.status !== "acquired") throw new Error("not acquired");
      const controller = new AbortController();
      const waiting = b.waitForLocks(spec, { acquireTimeoutMs: 5_000, signal: controller.signal });
      await until(() => h.service.snapshot("suite").waitingRequests === 1);
      controller.abort();
      await expect(waiting).rejects.toMatchObject({ code: "CANCELLED" });
      await until(() => h.service.snapshot("suite").waitingRequests === 0);
    });

    it("a timestamp lease is kept alive by the refresher past its lease; min is at most its timestamp until it is disposed", async () => {
      const lease = await a.acquireTimestampLease("compaction", 3);
      expect(lease.timestamps).toEqual({ start: lease.leased + 1, count: 3 });
      expect(lease.minLeased).toBe(lease.leased);
      const later = await b.acquireTimestampLease("compaction");
      expect(later.minLeased).toBe(lease.leased);
      // Longer than the server's 1 s lease: only refreshes keep it.
      await sleep(1_500);
      expect(await b.minLeasedTimestamp("compaction")).toBe(lease.leased);
      await lease[Symbol.asyncDispose]();
      expect(await b.minLeasedTimestamp("compaction")).toBe(later.leased);
      await later.release();
      expect(await b.minLeasedTimestamp("compaction")).toBeGreaterThan(later.leased);
      expect(h.service.snapshot("suite").heldTokens).toBe(0);
    });

    it("bad input is refused with INVALID_ARGUMENT naming the field", async () => {
      await expect(a.waitForLocks([{ descriptor: "d", mode: "permit" as never }])).rejects.toMatchObject({ code: "INVALID_ARGUMENT", message: expect.stringContaining("locks[0].mode") });
      await expect(a.acquireTimestampLease("", 1)).rejects.toMatchObject({ code: "INVALID_ARGUMENT", message: expect.stringContaining("name") });
      await expect(a.waitForLocks([{ descriptor: "d", mode: "shared" }], { acquireTimeoutMs: -1 })).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
    });
  });
}
