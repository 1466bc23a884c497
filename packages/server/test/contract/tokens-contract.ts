import type { LockSpec } from "@leasehold/protocol";
import { describe, expect, it } from "vitest";
import { sleep, uniqueNamespace } from "../support/wait-for.js";
import { granted, rejection, waiting, type ContractFactory, type ContractTarget } from "./contract-target.js";

const ex = (descriptor: string): LockSpec => ({ descriptor, mode: "exclusive" });

/** requestId idempotency, unlock, refresh, lease lapse, and refusal of bad input. */
export function tokensContract(get: () => ContractTarget, factory: ContractFactory): void {
  describe("requestId", () => {
    it("a retry of a granted request answers the same token and fencing tokens, never acquiring twice", async () => {
      const { service, table } = get();
      const ns = uniqueNamespace();
      const request = { requestId: "req-1", locks: [ex("a"), ex("b")] };
      const first = granted(await service.lock(ns, request));
      const retries = await Promise.all(Array.from({ length: 10 }, () => service.lock(ns, { ...request, acquireTimeoutMs: 1_000 })));
      for (const retry of retries) {
        expect(granted(retry).token).toBe(first.token);
        expect(granted(retry).acquired).toEqual(first.acquired);
      }
      expect(table.snapshot(ns).heldTokens).toBe(1);
    });

    it("concurrent retries of a waiting request join one wait and share its outcome", async () => {
      const target = get();
      const ns = uniqueNamespace();
      const holder = granted(await target.service.lock(ns, { locks: [ex("j")] }));
      const request = { requestId: "join", locks: [ex("j")], acquireTimeoutMs: 10_000 };
      const a = target.service.lock(ns, request);
      await waiting(target, ns, 1);
      const b = target.service.lock(ns, request);
      await sleep(50);
      expect(target.table.snapshot(ns).waitingRequests).toBe(1);
      await target.service.unlock(ns, { tokens: [holder.token] });
      const [ra, rb] = await Promise.all([a, b]);
      expect(granted(ra!).token).toBe(granted(rb!).token);
    });

    it("the same requestId with a different request is refused with REQUEST_ID_CONFLICT and changes nothing", async () => {
      const { service, table } = get();
      const ns = uniqueNamespace();
      granted(await service.lock(ns, { requestId: "r", locks: [ex("one")] }));
      const before = table.snapshot(ns);
      const err = await rejection(service.lock(ns, { requestId: "r", locks: [ex("two")] }));
      expect(err.code).toBe("REQUEST_ID_CONFLICT");
      expect(table.snapshot(ns)).toEqual(before);
    });

    it("is remembered per namespace", async () => {
      const { service } = get();
      const a = granted(await service.lock(uniqueNamespace(), { requestId: "same", locks: [ex("x")] }));
      const b = granted(await service.lock(uniqueNamespace(), { requestId: "same", locks: [ex("y")] }));
      expect(a.token).not.toBe(b.token);
    });
  });

  describe("unlock", () => {
    it("releases held tokens and ignores unknown or already released ones", async () => {
      const { service } = get();
      const ns = uniqueNamespace();
      const a = granted(await service.lock(ns, { locks: [ex("u")] }));
      expect(await service.unlock(ns, { tokens: [a.token, "no-such-token"] })).toEqual({ unlocked: [a.token] });
      expect(await service.unlock(ns, { tokens: [a.token] })).toEqual({ unlocked: [] });
      granted(await service.lock(ns, { locks: [ex("u")] }));
    });

    it("many concurrent unlocks of the same token release it once", async () => {
      const { service } = get();
      const ns = uniqueNamespace();
      const a = granted(await service.lock(ns, { locks: [ex("v")] }));
      const answers = await Promise.all(Array.from({ length: 20 }, () => service.unlock(ns, { tokens: [a.token] })));
      expect(answers.flatMap((x) => x.unlocked)).toEqual([a.token]);
    });

    it("a token is valid only in its own namespace", async () => {
      const { service } = get();
      const ns = uniqueNamespace();
      const a = granted(await service.lock(ns, { locks: [ex("w")] }));
      expect(await service.unlock(uniqueNamespace(), { tokens: [a.token] })).toEqual({ unlocked: [] });
      expect((await service.lock(ns, { locks: [ex("w")] })).status).toBe("timeout");
    });
  });

  describe("refresh and leases", () => {
    it("refreshes held tokens with a lease from the current leader, and omits others", async () => {
      const { service } = get();
      const ns = uniqueNamespace();
      const a = granted(await service.lock(ns, { locks: [ex("f")] }));
      const { leaderId } = await service.health();
      expect(a.lease.leaderId).toBe(leaderId);
      const res = await service.refresh(ns, { tokens: [a.token, "unknown"] });
      expect(res.refreshed).toEqual([a.token]);
      expect(res.lease.leaderId).toBe(leaderId);
      expect(res.lease.validForMs).toBeGreaterThan(0);
      await service.unlock(ns, { tokens: [a.token] });
      expect((await service.refresh(ns, { tokens: [a.token] })).refreshed).toEqual([]);
    });

    it("a lease lapses when not refreshed: waiters are granted, and refresh never revives it", async () => {
      const target = await factory({ leaseMs: 300 });
      try {
        const { service } = target;
        const ns = uniqueNamespace();
        const kept = granted(await service.lock(ns, { locks: [ex("kept")] }));
        const lapsed = granted(await service.lock(ns, { locks: [ex("lapsing")] }));
        expect(lapsed.lease.validForMs).toBeLessThan(300);
        const waiter = service.lock(ns, { locks: [ex("lapsing")], acquireTimeoutMs: 5_000 });
        const started = Date.now();
        for (let i = 0; i < 8; i++) {
          await sleep(100);
          expect((await service.refresh(ns, { tokens: [kept.token] })).refreshed).toEqual([kept.token]);
        }
        const next = granted(await waiter);
        expect(Date.now() - started).toBeLessThan(2_000);
        expect(next.acquired[0]!.fencingToken).toBeGreaterThan(lapsed.acquired[0]!.fencingToken);
        expect((await service.refresh(ns, { tokens: [lapsed.token] })).refreshed).toEqual([]);
        expect(await service.unlock(ns, { tokens: [lapsed.token] })).toEqual({ unlocked: [] });
        expect((await service.lock(ns, { locks: [ex("kept")] })).status).toBe("timeout");
      } finally {
        await target.close();
      }
    });
  });

  describe("bad input", () => {
    it.each([
      ["an unknown field", { locks: [ex("a")], lockz: 1 }],
      ["an unknown field in a lock", { locks: [{ descriptor: "a", mode: "exclusive", color: "red" }] }],
      ["a null field", { locks: [ex("a")], acquireTimeoutMs: null }],
      ["an unknown mode", { locks: [{ descriptor: "a", mode: "exclusiv" }] }],
      ["no locks", { locks: [] }],
      ["duplicate descriptors", { locks: [ex("a"), ex("a")] }],
      ["a permit without limit", { locks: [{ descriptor: "a", mode: "permit" }] }],
      ["a limit on exclusive", { locks: [{ descriptor: "a", mode: "exclusive", limit: 2 }] }],
      ["a timeout over 60 s", { locks: [ex("a")], acquireTimeoutMs: 60_001 }],
      ["max with all-or-none", { locks: [ex("a")], max: 1 }],
      ["an empty descriptor", { locks: [ex("")] }],
      ["a lone surrogate", { locks: [ex("\ud800")] }],
    ])("refuses %s with INVALID_ARGUMENT and changes nothing", async (_what, body) => {
      const { service, table } = get();
      const ns = uniqueNamespace();
      granted(await service.lock(ns, { locks: [ex("a")] }));
      const before = table.snapshot(ns);
      const err = await rejection(service.lock(ns, body as never));
      expect(err.code).toBe("INVALID_ARGUMENT");
      expect(table.snapshot(ns)).toEqual(before);
    });

    it("refuses a bad namespace, bad counts and empty token lists", async () => {
      const { service } = get();
      expect((await rejection(service.timestamps("-bad", { count: 1 }))).code).toBe("INVALID_ARGUMENT");
      expect((await rejection(service.timestamps("ok", { count: 0 }))).code).toBe("INVALID_ARGUMENT");
      expect((await rejection(service.timestamps("ok", { count: 10_001 }))).code).toBe("INVALID_ARGUMENT");
      expect((await rejection(service.startTransactions("ok", { count: 1_001 }))).code).toBe("INVALID_ARGUMENT");
      expect((await rejection(service.unlock("ok", { tokens: [] }))).code).toBe("INVALID_ARGUMENT");
      expect((await rejection(service.refresh("ok", { tokens: [null] } as never))).code).toBe("INVALID_ARGUMENT");
      expect((await rejection(service.immutableTimestamp("ok", { extra: 1 } as never))).code).toBe("INVALID_ARGUMENT");
    });
  });
}
