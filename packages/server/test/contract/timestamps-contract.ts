import { describe, expect, it } from "vitest";
import { uniqueNamespace } from "../support/wait-for.js";
import { granted, waiting, type ContractTarget } from "./contract-target.js";

/** Fencing tokens, timestamps, transactions and the immutable timestamp, and namespace independence. */
export function timestampsContract(get: () => ContractTarget): void {
  describe("fencing tokens", () => {
    it("strictly increase across grants of a descriptor in every mode, above every earlier timestamp", async () => {
      const target = get();
      const ns = uniqueNamespace();
      const { start } = await target.service.timestamps(ns, { count: 5 });
      let last = start + 4;
      for (const mode of ["exclusive", "shared", "permit", "exclusive"] as const) {
        const spec = mode === "permit" ? { descriptor: "f", mode, limit: 2 } : { descriptor: "f", mode };
        const res = granted(await target.service.lock(ns, { locks: [spec] }));
        const fence = res.acquired[0]!.fencingToken;
        expect(fence).toBeGreaterThan(last);
        last = fence;
        await target.service.unlock(ns, { tokens: [res.token] });
      }
    });

    it("increase in grant order under contention", async () => {
      const target = get();
      const ns = uniqueNamespace();
      const fences: number[] = [];
      const workers = Array.from({ length: 25 }, async () => {
        const res = granted(await target.service.lock(ns, { locks: [{ descriptor: "hot", mode: "exclusive" }], acquireTimeoutMs: 30_000 }));
        fences.push(res.acquired[0]!.fencingToken);
        await target.service.unlock(ns, { tokens: [res.token] });
      });
      await Promise.all(workers);
      expect(fences).toHaveLength(25);
      expect([...fences].sort((a, b) => a - b)).toEqual(fences);
      expect(new Set(fences).size).toBe(25);
      expect(target.table.snapshot(ns).heldTokens).toBe(0);
    });
  });

  describe("timestamps", () => {
    it("hands out disjoint, strictly increasing ranges under concurrency", async () => {
      const { service } = get();
      const ns = uniqueNamespace();
      const ranges = await Promise.all(Array.from({ length: 50 }, (_, i) => service.timestamps(ns, { count: i + 1 })));
      const values: number[] = [];
      ranges.forEach((r, i) => {
        expect(r.count).toBe(i + 1);
        expect(Number.isSafeInteger(r.start) && r.start > 0).toBe(true);
        for (let t = r.start; t < r.start + r.count; t++) values.push(t);
      });
      expect(new Set(values).size).toBe(values.length);
      const after = await service.timestamps(ns, { count: 1 });
      expect(after.start).toBeGreaterThan(Math.max(...values));
    });

    it("share one counter with fencing tokens", async () => {
      const { service } = get();
      const ns = uniqueNamespace();
      const lock = granted(await service.lock(ns, { locks: [{ descriptor: "c", mode: "exclusive" }] }));
      const ts = await service.timestamps(ns, { count: 1 });
      expect(ts.start).toBeGreaterThan(lock.acquired[0]!.fencingToken);
      const again = granted(await service.lock(ns, { locks: [{ descriptor: "d", mode: "exclusive" }] }));
      expect(again.acquired[0]!.fencingToken).toBeGreaterThan(ts.start);
    });
  });

  describe("transactions and the immutable timestamp", () => {
    it("start transactions at fresh timestamps held by immutable-timestamp locks", async () => {
      const { service } = get();
      const ns = uniqueNamespace();
      const before = await service.timestamps(ns, { count: 1 });
      const started = await service.startTransactions(ns, { count: 3 });
      const starts = started.transactions.map((t) => t.startTimestamp);
      expect(starts).toHaveLength(3);
      expect(new Set(started.transactions.map((t) => t.token)).size).toBe(3);
      expect(Math.min(...starts)).toBeGreaterThan(before.start);
      expect(started.immutableTimestamp).toBeLessThanOrEqual(Math.min(...starts));
      expect(started.lease.validForMs).toBeGreaterThan(0);
    });

    it("the immutable timestamp is the oldest held start, and moves up when it is released", async () => {
      const { service } = get();
      const ns = uniqueNamespace();
      const old = await service.startTransactions(ns, { count: 1 });
      const oldTxn = old.transactions[0]!;
      const young = await service.startTransactions(ns, { count: 1 });
      const youngTxn = young.transactions[0]!;
      expect(young.immutableTimestamp).toBe(oldTxn.startTimestamp);
      await service.timestamps(ns, { count: 10 });
      expect((await service.immutableTimestamp(ns, {})).immutableTimestamp).toBe(oldTxn.startTimestamp);
      await service.unlock(ns, { tokens: [oldTxn.token] });
      expect((await service.immutableTimestamp(ns, {})).immutableTimestamp).toBe(youngTxn.startTimestamp);
      await service.unlock(ns, { tokens: [youngTxn.token] });
      const fresh = await service.immutableTimestamp(ns, {});
      const latest = await service.timestamps(ns, { count: 1 });
      expect(fresh.immutableTimestamp).toBeGreaterThan(youngTxn.startTimestamp);
      expect(latest.start).toBeGreaterThanOrEqual(fresh.immutableTimestamp);
    });

    it("transaction tokens refresh and lapse like lock tokens", async () => {
      const { service } = get();
      const ns = uniqueNamespace();
      const started = await service.startTransactions(ns, { count: 2 });
      const tokens = started.transactions.map((t) => t.token);
      expect((await service.refresh(ns, { tokens })).refreshed.sort()).toEqual([...tokens].sort());
      expect((await service.unlock(ns, { tokens })).unlocked.sort()).toEqual([...tokens].sort());
    });
  });

  describe("namespaces", () => {
    it("are independent: locks, waiters and counters", async () => {
      const target = get();
      const a = uniqueNamespace("a");
      const b = uniqueNamespace("b");
      const inA = granted(await target.service.lock(a, { locks: [{ descriptor: "same", mode: "exclusive" }] }));
      const inB = granted(await target.service.lock(b, { locks: [{ descriptor: "same", mode: "exclusive" }] }));
      expect(inA.token).not.toBe(inB.token);
      const waiter = target.service.lock(a, { locks: [{ descriptor: "same", mode: "exclusive" }], acquireTimeoutMs: 10_000 });
      await waiting(target, a, 1);
      expect(target.table.snapshot(b).waitingRequests).toBe(0);
      await target.service.timestamps(a, { count: 1_000 });
      const firstOfC = await target.service.timestamps(uniqueNamespace("c"), { count: 1 });
      expect(firstOfC.start).toBeLessThan(1_000);
      await target.service.unlock(a, { tokens: [inA.token] });
      granted(await waiter);
    });
  });
}
