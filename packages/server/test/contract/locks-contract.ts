import type { LockSpec } from "@leasehold/protocol";
import { describe, expect, it } from "vitest";
import { sleep, uniqueNamespace } from "../support/wait-for.js";
import { granted, rejection, waiting, type ContractTarget } from "./contract-target.js";

const ex = (descriptor: string): LockSpec => ({ descriptor, mode: "exclusive" });
const sh = (descriptor: string): LockSpec => ({ descriptor, mode: "shared" });
const permit = (descriptor: string, limit: number): LockSpec => ({ descriptor, mode: "permit", limit });

/** Modes, first-in-first-out waiting, all-or-none, as-many-as-possible, permit limits, aborts. */
export function locksContract(get: () => ContractTarget): void {
  describe("lock modes", () => {
    it("exclusive conflicts with every mode; shared shares with shared; permits share up to the limit", async () => {
      const { service } = get();
      const ns = uniqueNamespace();
      const x = granted(await service.lock(ns, { locks: [ex("x")] }));
      for (const spec of [ex("x"), sh("x"), permit("x", 5)]) {
        expect((await service.lock(ns, { locks: [spec] })).status).toBe("timeout");
      }
      await service.unlock(ns, { tokens: [x.token] });

      const readers = await Promise.all(Array.from({ length: 20 }, () => service.lock(ns, { locks: [sh("doc")] })));
      readers.forEach((r) => granted(r));
      expect((await service.lock(ns, { locks: [ex("doc")] })).status).toBe("timeout");
      expect((await service.lock(ns, { locks: [permit("doc", 3)] })).status).toBe("timeout");
      await service.unlock(ns, { tokens: readers.map((r) => granted(r).token) });

      const permits = await Promise.all(Array.from({ length: 10 }, () => service.lock(ns, { locks: [permit("job", 3)] })));
      expect(permits.filter((p) => p.status === "acquired")).toHaveLength(3);
      expect((await service.lock(ns, { locks: [sh("job")] })).status).toBe("timeout");
    });

    it("a released lock is granted at once to the next waiter", async () => {
      const { service } = get();
      const ns = uniqueNamespace();
      const a = granted(await service.lock(ns, { locks: [ex("r")] }));
      const b = service.lock(ns, { locks: [ex("r")], acquireTimeoutMs: 10_000 });
      await waiting(get(), ns, 1);
      const started = Date.now();
      await service.unlock(ns, { tokens: [a.token] });
      granted(await b);
      expect(Date.now() - started).toBeLessThan(1_000);
    });

    it("answers timeout after acquireTimeoutMs when the lock stays held", async () => {
      const { service } = get();
      const ns = uniqueNamespace();
      granted(await service.lock(ns, { locks: [ex("r")] }));
      const started = Date.now();
      expect(await service.lock(ns, { locks: [ex("r")], acquireTimeoutMs: 200 })).toEqual({ status: "timeout" });
      expect(Date.now() - started).toBeGreaterThanOrEqual(190);
    });
  });

  describe("fairness", () => {
    it("grants waiters on a descriptor first in, first out", async () => {
      const target = get();
      const ns = uniqueNamespace();
      const first = granted(await target.service.lock(ns, { locks: [ex("q")] }));
      const order: number[] = [];
      const waits: Promise<unknown>[] = [];
      for (let i = 0; i < 15; i++) {
        waits.push(
          target.service.lock(ns, { locks: [ex("q")], acquireTimeoutMs: 20_000 }).then(async (res) => {
            order.push(i);
            await target.service.unlock(ns, { tokens: [granted(res).token] });
          }),
        );
        await waiting(target, ns, i + 1);
      }
      await target.service.unlock(ns, { tokens: [first.token] });
      await Promise.all(waits);
      expect(order).toEqual(Array.from({ length: 15 }, (_, i) => i));
    });

    it("a shared request never overtakes a queued exclusive one, though it is compatible with the holders", async () => {
      const target = get();
      const ns = uniqueNamespace();
      const reader = granted(await target.service.lock(ns, { locks: [sh("d")] }));
      const writer = target.service.lock(ns, { locks: [ex("d")], acquireTimeoutMs: 10_000 });
      await waiting(target, ns, 1);
      expect((await target.service.lock(ns, { locks: [sh("d")], acquireTimeoutMs: 100 })).status).toBe("timeout");
      const lateReader = target.service.lock(ns, { locks: [sh("d")], acquireTimeoutMs: 10_000 });
      await waiting(target, ns, 2);
      await target.service.unlock(ns, { tokens: [reader.token] });
      const w = granted(await writer);
      expect(target.table.snapshot(ns).waitingRequests).toBe(1);
      await target.service.unlock(ns, { tokens: [w.token] });
      granted(await lateReader);
    });
  });

  describe("mutual exclusion under load", () => {
    it("100 concurrent workers on one exclusive descriptor never overlap, and each is granted once", async () => {
      const { service, table } = get();
      const ns = uniqueNamespace();
      let inside = 0;
      let most = 0;
      const grants: number[] = [];
      await Promise.all(
        Array.from({ length: 100 }, async () => {
          const res = granted(await service.lock(ns, { locks: [ex("crit"), sh(`side-${grants.length % 7}`)], acquireTimeoutMs: 60_000 }));
          inside++;
          most = Math.max(most, inside);
          grants.push(res.acquired.find((l) => l.descriptor === "crit")!.fencingToken);
          await sleep(1);
          inside--;
          await service.unlock(ns, { tokens: [res.token] });
        }),
      );
      expect(most).toBe(1);
      expect(grants).toHaveLength(100);
      expect([...grants].sort((a, b) => a - b)).toEqual(grants);
      expect(table.snapshot(ns)).toMatchObject({ heldTokens: 0, waitingRequests: 0, descriptors: [] });
    });
  });

  describe("behavior all-or-none", () => {
    it("holds what it acquired while waiting, and releases all of it on timeout", async () => {
      const target = get();
      const ns = uniqueNamespace();
      const holder = granted(await target.service.lock(ns, { locks: [ex("b")] }));
      const both = target.service.lock(ns, { locks: [ex("b"), ex("a")], acquireTimeoutMs: 300 });
      await waiting(target, ns, 1);
      // "a" sorts first and is held by the waiting request.
      expect((await target.service.lock(ns, { locks: [ex("a")] })).status).toBe("timeout");
      expect(await both).toEqual({ status: "timeout" });
      granted(await target.service.lock(ns, { locks: [ex("a")] }));
      await target.service.unlock(ns, { tokens: [holder.token] });
    });

    it("grants every descriptor at once with one fencing token each", async () => {
      const { service } = get();
      const ns = uniqueNamespace();
      const res = granted(await service.lock(ns, { locks: [ex("z"), sh("m"), permit("a", 2)] }));
      expect(res.acquired.map((l) => [l.descriptor, l.mode])).toEqual([
        ["a", "permit"],
        ["m", "shared"],
        ["z", "exclusive"],
      ]);
      expect(new Set(res.acquired.map((l) => l.fencingToken)).size).toBe(3);
    });
  });

  describe("behavior as-many-as-possible", () => {
    it("takes free descriptors in ascending order up to max, skipping held ones", async () => {
      const { service } = get();
      const ns = uniqueNamespace();
      granted(await service.lock(ns, { locks: [ex("item-1")] }));
      const items = ["item-4", "item-3", "item-2", "item-1"].map(ex);
      const claim = granted(await service.lock(ns, { locks: items, behavior: "as-many-as-possible", max: 2 }));
      expect(claim.acquired.map((l) => l.descriptor)).toEqual(["item-2", "item-3"]);
      const rest = granted(await service.lock(ns, { locks: items, behavior: "as-many-as-possible" }));
      expect(rest.acquired.map((l) => l.descriptor)).toEqual(["item-4"]);
    });

    it("skips a descriptor someone is queued on, and never joins a queue", async () => {
      const target = get();
      const ns = uniqueNamespace();
      granted(await target.service.lock(ns, { locks: [sh("s")] }));
      const queued = target.service.lock(ns, { locks: [ex("s")], acquireTimeoutMs: 500 });
      await waiting(target, ns, 1);
      const claim = await target.service.lock(ns, { locks: [sh("s")], behavior: "as-many-as-possible" });
      expect(claim).toEqual({ status: "timeout" });
      expect(target.table.snapshot(ns).waitingRequests).toBe(1);
      await queued;
    });

    it("with a timeout, waits until it can take at least one, then takes what it can", async () => {
      const target = get();
      const ns = uniqueNamespace();
      const held = await Promise.all(["w1", "w2", "w3"].map((d) => target.service.lock(ns, { locks: [ex(d)] })));
      const claim = target.service.lock(ns, { locks: ["w1", "w2", "w3"].map(ex), behavior: "as-many-as-possible", acquireTimeoutMs: 10_000 });
      await waiting(target, ns, 1);
      await target.service.unlock(ns, { tokens: [granted(held[1]!).token] });
      expect(granted(await claim).acquired.map((l) => l.descriptor)).toEqual(["w2"]);
    });
  });

  describe("permit limit", () => {
    it("raising the limit grants queued waiters at once; lowering it revokes nothing", async () => {
      const target = get();
      const ns = uniqueNamespace();
      const one = granted(await target.service.lock(ns, { locks: [permit("p", 1)] }));
      const queued = target.service.lock(ns, { locks: [permit("p", 1)], acquireTimeoutMs: 10_000 });
      await waiting(target, ns, 1);
      // The newest request's limit (2) applies on arrival: the queued request fits and is granted first.
      expect((await target.service.lock(ns, { locks: [permit("p", 2)] })).status).toBe("timeout");
      const two = granted(await queued);
      expect((await target.service.lock(ns, { locks: [permit("p", 1)] })).status).toBe("timeout");
      const refreshed = await target.service.refresh(ns, { tokens: [one.token, two.token] });
      expect(refreshed.refreshed.sort()).toEqual([one.token, two.token].sort());
      await target.service.unlock(ns, { tokens: [one.token] });
      // Two holders down to one, with limit 1: still no room.
      expect((await target.service.lock(ns, { locks: [permit("p", 1)] })).status).toBe("timeout");
      await target.service.unlock(ns, { tokens: [two.token] });
      granted(await target.service.lock(ns, { locks: [permit("p", 1)] }));
    });
  });

  describe("abandoned requests", () => {
    it("an aborted waiting request leaves the queue and releases what it had acquired", async () => {
      const target = get();
      const ns = uniqueNamespace();
      const holder = granted(await target.service.lock(ns, { locks: [ex("k2")] }));
      const controller = new AbortController();
      const abandoned = target.service.lock(ns, { locks: [ex("k1"), ex("k2")], acquireTimeoutMs: 20_000 }, { signal: controller.signal });
      await waiting(target, ns, 1);
      const next = target.service.lock(ns, { locks: [ex("k2")], acquireTimeoutMs: 20_000 });
      await waiting(target, ns, 2);
      controller.abort();
      await rejection(abandoned);
      await waiting(target, ns, 1);
      await target.service.unlock(ns, { tokens: [holder.token] });
      granted(await next);
      granted(await target.service.lock(ns, { locks: [ex("k1")] }));
      await sleep(10);
      expect(target.table.snapshot(ns).waitingRequests).toBe(0);
    });
  });
}
