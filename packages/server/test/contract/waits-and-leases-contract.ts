import type { LockService, LockSpec, WaitForLocksResponse } from "@leasehold/protocol";
import { describe, expect, it } from "vitest";
import { sleep, uniqueNamespace } from "../support/wait-for.js";
import { granted, rejection, waiting, type ContractFactory, type ContractTarget } from "./contract-target.js";

const ex = (descriptor: string) => ({ descriptor, mode: "exclusive" as const }) satisfies LockSpec;
const sh = (descriptor: string) => ({ descriptor, mode: "shared" as const }) satisfies LockSpec;

/** The optional methods of the additions, which every implementation under test has. */
function methods(service: LockService): Required<Pick<LockService, "waitForLocks" | "acquireTimestampLease" | "minLeasedTimestamp" | "cancelLock">> {
  const { waitForLocks, acquireTimestampLease, minLeasedTimestamp, cancelLock } = service;
  if (!waitForLocks || !acquireTimestampLease || !minLeasedTimestamp || !cancelLock) throw new Error("the service lacks wait-for-locks or timestamp-leases");
  return {
    waitForLocks: waitForLocks.bind(service),
    acquireTimestampLease: acquireTimestampLease.bind(service),
    minLeasedTimestamp: minLeasedTimestamp.bind(service),
    cancelLock: cancelLock.bind(service),
  };
}

/** Tracks whether a promise has settled yet, without awaiting it. */
function watch<T>(promise: Promise<T>): { readonly settled: () => boolean; readonly promise: Promise<T> } {
  let done = false;
  void promise.then(
    () => (done = true),
    () => (done = true),
  );
  return { settled: () => done, promise };
}

/** `wait-for-locks` and `timestamp-leases` (PROTOCOL.md), through the service under test. */
export function waitsAndLeasesContract(get: () => ContractTarget, factory: ContractFactory): void {
  describe("wait-for-locks", () => {
    it("free at once when nothing conflicts; queued behind a holder it answers free only after the release, and the lock request queued after it is granted", async () => {
      const target = get();
      const { service } = target;
      const m = methods(service);
      const ns = uniqueNamespace();
      expect(await m.waitForLocks(ns, { locks: [ex("d"), sh("e")] })).toEqual({ status: "free" });
      const holder = granted(await service.lock(ns, { locks: [ex("d")] }));
      const w = watch(m.waitForLocks(ns, { locks: [ex("d")], acquireTimeoutMs: 10_000 }));
      await waiting(target, ns, 1);
      const later = watch(service.lock(ns, { locks: [ex("d")], acquireTimeoutMs: 10_000 }));
      await waiting(target, ns, 2);
      await sleep(50);
      expect(w.settled()).toBe(false);
      await service.unlock(ns, { tokens: [holder.token] });
      expect(await w.promise).toEqual({ status: "free" });
      const l = granted(await later.promise);
      // The wait took nothing: the later request is the only holder.
      expect(target.table.snapshot(ns).descriptors[0]?.holders).toHaveLength(1);
      await service.unlock(ns, { tokens: [l.token] });
    });

    it("waits behind a request queued before it, even in a mode compatible with the holders", async () => {
      const target = get();
      const { service } = target;
      const ns = uniqueNamespace();
      const reader = granted(await service.lock(ns, { locks: [sh("d")] }));
      const writer = service.lock(ns, { locks: [ex("d")], acquireTimeoutMs: 10_000 });
      await waiting(target, ns, 1);
      const w = watch(methods(service).waitForLocks(ns, { locks: [sh("d")], acquireTimeoutMs: 10_000 }));
      await waiting(target, ns, 2);
      await service.unlock(ns, { tokens: [reader.token] });
      const wrote = granted(await writer);
      await sleep(50);
      expect(w.settled()).toBe(false);
      await service.unlock(ns, { tokens: [wrote.token] });
      expect(await w.promise).toEqual({ status: "free" });
    });

    it("answers timeout at its deadline while a descriptor stays held, and leaves no trace", async () => {
      const target = get();
      const ns = uniqueNamespace();
      granted(await target.service.lock(ns, { locks: [ex("d")] }));
      const started = Date.now();
      expect(await methods(target.service).waitForLocks(ns, { locks: [ex("d")], acquireTimeoutMs: 200 })).toEqual({ status: "timeout" });
      expect(Date.now() - started).toBeGreaterThanOrEqual(190);
      expect(target.table.snapshot(ns).waitingRequests).toBe(0);
    });

    it("a repeated requestId joins the running wait; lock-cancel with it ends the wait with timeout", async () => {
      const target = get();
      const m = methods(target.service);
      const ns = uniqueNamespace();
      const holder = granted(await target.service.lock(ns, { locks: [ex("d")] }));
      const request = { requestId: "w-1", locks: [ex("d")], acquireTimeoutMs: 10_000 };
      const a = m.waitForLocks(ns, request);
      await waiting(target, ns, 1);
      const b = m.waitForLocks(ns, request);
      await sleep(50);
      expect(target.table.snapshot(ns).waitingRequests).toBe(1);
      const conflict = await rejection(target.service.lock(ns, { requestId: "w-1", locks: [ex("d")] }));
      expect(conflict.code).toBe("REQUEST_ID_CONFLICT");
      expect(await m.cancelLock(ns, { requestId: "w-1" })).toEqual({ cancelled: true });
      const answers: WaitForLocksResponse[] = await Promise.all([a, b]);
      expect(answers).toEqual([{ status: "timeout" }, { status: "timeout" }]);
      expect(target.table.snapshot(ns).waitingRequests).toBe(0);
      // The holder is untouched by the cancel.
      expect((await target.service.refresh(ns, { tokens: [holder.token] })).refreshed).toEqual([holder.token]);
    });

    it("an aborted wait leaves the queue", async () => {
      const target = get();
      const ns = uniqueNamespace();
      granted(await target.service.lock(ns, { locks: [ex("d")] }));
      const controller = new AbortController();
      const w = methods(target.service).waitForLocks(ns, { locks: [ex("d")], acquireTimeoutMs: 10_000 }, { signal: controller.signal });
      await waiting(target, ns, 1);
      controller.abort();
      expect((await rejection(w)).code).toBe("CANCELLED");
      await waiting(target, ns, 0);
    });

    it.each([
      [{ locks: [{ descriptor: "d", mode: "permit", limit: 2 }] }, "locks[0]"],
      [{ locks: [] }, "locks"],
      [{ locks: [ex("d"), sh("d")] }, "locks[1].descriptor"],
      [{ locks: [ex("d")], acquireTimeoutMs: -1 }, "acquireTimeoutMs"],
      [{ locks: [ex("d")], behavior: "as-many-as-possible" }, "behavior"],
    ])("refuses %j with INVALID_ARGUMENT naming %s, changing nothing", async (body, path) => {
      const target = get();
      const ns = uniqueNamespace();
      const err = await rejection(methods(target.service).waitForLocks(ns, body as never));
      expect(err.code).toBe("INVALID_ARGUMENT");
      expect(err.message).toContain(path);
      expect(target.table.snapshot(ns)).toMatchObject({ descriptors: [], waitingRequests: 0, heldTokens: 0 });
    });
  });

  describe("timestamp-leases", () => {
    it("per name: min is the smallest held, released by unlock, else a fresh timestamp above everything", async () => {
      const { service } = get();
      const m = methods(service);
      const ns = uniqueNamespace();
      const a = await m.acquireTimestampLease(ns, { name: "compaction", count: 2 });
      expect(a.minLeased).toBe(a.leased);
      expect(a.timestamps).toEqual({ start: a.leased + 1, count: 2 });
      const b = await m.acquireTimestampLease(ns, { name: "compaction", count: 0 });
      expect(b.leased).toBeGreaterThan(a.leased + 2);
      expect(b.minLeased).toBe(a.leased);
      expect((await m.acquireTimestampLease(ns, { name: "other", count: 0 })).minLeased).toBeGreaterThan(b.leased);
      expect(await m.minLeasedTimestamp(ns, { name: "compaction" })).toEqual({ minLeased: a.leased });
      expect((await service.refresh(ns, { tokens: [a.token, b.token] })).refreshed).toEqual([a.token, b.token]);
      expect((await service.unlock(ns, { tokens: [a.token] })).unlocked).toEqual([a.token]);
      expect(await m.minLeasedTimestamp(ns, { name: "compaction" })).toEqual({ minLeased: b.leased });
      await service.unlock(ns, { tokens: [b.token] });
      const fresh = (await m.minLeasedTimestamp(ns, { name: "compaction" })).minLeased;
      expect((await service.timestamps(ns, { count: 1 })).start).toBe(fresh + 1);
    });

    it("a lease lapses like a lock when nothing refreshes it", async () => {
      const target = await factory({ leaseMs: 300 });
      try {
        const m = methods(target.service);
        const ns = uniqueNamespace();
        const a = await m.acquireTimestampLease(ns, { name: "n", count: 0 });
        await sleep(600);
        expect((await target.service.refresh(ns, { tokens: [a.token] })).refreshed).toEqual([]);
        expect((await m.minLeasedTimestamp(ns, { name: "n" })).minLeased).toBeGreaterThan(a.leased);
      } finally {
        await target.close();
      }
    });

    it.each([
      [{ name: "", count: 1 }, "name"],
      [{ name: "n", count: 10_001 }, "count"],
      [{ name: "n" }, "count"],
      [{ name: "n", count: 1, extra: true }, "extra"],
    ])("refuses %j with INVALID_ARGUMENT naming %s, changing nothing", async (body, path) => {
      const target = get();
      const ns = uniqueNamespace();
      const before = (await target.service.timestamps(ns, { count: 1 })).start;
      const err = await rejection(methods(target.service).acquireTimestampLease(ns, body as never));
      expect(err.code).toBe("INVALID_ARGUMENT");
      expect(err.message).toContain(path);
      expect((await rejection(methods(target.service).minLeasedTimestamp(ns, { name: "n", count: 1 } as never))).code).toBe("INVALID_ARGUMENT");
      expect((await target.service.timestamps(ns, { count: 1 })).start).toBe(before + 1);
      expect(target.table.snapshot(ns).heldTokens).toBe(0);
    });
  });
}
