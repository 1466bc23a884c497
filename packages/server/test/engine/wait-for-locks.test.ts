import type { LockSpec, WaitForLocksRequest } from "@leasehold/protocol";
import { describe, expect, it } from "vitest";
import { PendingLock } from "../../src/engine/pending-lock.js";
import { makeEngine, req, s, tokenOf, x } from "./engine-fixture.js";

/** A wait on `locks` (the fixture's exclusive and shared specs), 1 s unless `extra` says otherwise. */
const wait = (locks: LockSpec[], extra: Partial<WaitForLocksRequest> = {}): WaitForLocksRequest => ({
  locks: locks.map(({ descriptor, mode }) => ({ descriptor, mode: mode === "shared" ? "shared" : "exclusive" })),
  acquireTimeoutMs: 1_000,
  ...extra,
});
const pending = (attempt: unknown): PendingLock => {
  expect(attempt).toBeInstanceOf(PendingLock);
  return attempt as PendingLock;
};

describe("waitForLocks (PROTOCOL.md wait-for-locks)", () => {
  it("answers free at once when every descriptor could be granted now, and creates nothing", () => {
    const t = makeEngine();
    expect(t.engine.waitForLocks("ns", wait([x("a"), s("b")]))).toEqual({ status: "free" });
    const shared = tokenOf(t.engine.lock("ns", req([s("d")])));
    expect(t.engine.waitForLocks("ns", wait([s("d")]))).toEqual({ status: "free" });
    expect(t.engine.snapshot("ns").descriptors.map((d) => d.descriptor)).toEqual(["d"]);
    expect(t.engine.snapshot("ns").waitingRequests).toBe(0);
    t.engine.unlock("ns", { tokens: [shared] });
  });

  it("answers timeout at once with acquireTimeoutMs 0 when a descriptor is held in a conflicting mode", () => {
    const t = makeEngine();
    tokenOf(t.engine.lock("ns", req([x("d")])));
    expect(t.engine.waitForLocks("ns", { locks: [{ descriptor: "d", mode: "shared" }] })).toEqual({ status: "timeout" });
    expect(t.engine.snapshot("ns").waitingRequests).toBe(0);
  });

  it("queued behind an exclusive holder and before a later lock request: passes first, then the later request is granted", () => {
    const t = makeEngine();
    const holder = tokenOf(t.engine.lock("ns", req([x("d")])));
    const w = pending(t.engine.waitForLocks("ns", wait([x("d")])));
    const later = pending(t.engine.lock("ns", req([x("d")], { acquireTimeoutMs: 1_000 })));
    expect(t.outcome(w)).toBeUndefined();
    t.engine.unlock("ns", { tokens: [holder] });
    // Settled in queue order: the wait's free, then the grant of the request queued behind it.
    expect(t.settledOrder).toEqual([w, later]);
    expect(t.outcome(w)).toEqual({ status: "free" });
    tokenOf(t.outcome(later));
    // The wait took nothing: the later request holds d alone.
    expect(t.engine.snapshot("ns").descriptors[0]?.holders).toHaveLength(1);
  });

  it("waits behind every request queued before it: free only once an earlier queued exclusive request has come and gone", () => {
    const t = makeEngine();
    const holder = tokenOf(t.engine.lock("ns", req([s("d")])));
    const earlier = pending(t.engine.lock("ns", req([x("d")], { acquireTimeoutMs: 1_000 })));
    // Compatible with the shared holder, but queued behind the exclusive request: no overtaking.
    const w = pending(t.engine.waitForLocks("ns", wait([s("d")])));
    t.engine.unlock("ns", { tokens: [holder] });
    const e = tokenOf(t.outcome(earlier));
    expect(t.outcome(w)).toBeUndefined();
    t.engine.unlock("ns", { tokens: [e] });
    expect(t.outcome(w)).toEqual({ status: "free" });
  });

  it("goes through its descriptors in ascending order, joining each queue behind whoever is queued there when it arrives", () => {
    const t = makeEngine();
    const holdsA = tokenOf(t.engine.lock("ns", req([x("a")])));
    const holdsB = tokenOf(t.engine.lock("ns", req([x("b")])));
    const w = pending(t.engine.waitForLocks("ns", wait([x("b"), x("a")])));
    // Queued on b after the wait arrived but before the wait reached b.
    const onB = pending(t.engine.lock("ns", req([x("b")], { acquireTimeoutMs: 1_000 })));
    t.engine.unlock("ns", { tokens: [holdsA] });
    // Past a; on b it queues behind onB, as a lock request reaching b now would.
    expect(t.outcome(w)).toBeUndefined();
    expect(t.engine.snapshot("ns").descriptors.find((d) => d.descriptor === "b")?.queue).toEqual([{ mode: "exclusive" }, { mode: "exclusive" }]);
    // It holds nothing on a: a new exclusive request on a is granted at once.
    const a2 = tokenOf(t.engine.lock("ns", req([x("a")])));
    t.engine.unlock("ns", { tokens: [holdsB] });
    const b2 = tokenOf(t.outcome(onB));
    expect(t.outcome(w)).toBeUndefined();
    t.engine.unlock("ns", { tokens: [b2, a2] });
    expect(t.outcome(w)).toEqual({ status: "free" });
  });

  it("times out at its deadline, leaving the queue without disturbing the requests behind it", () => {
    const t = makeEngine();
    const holder = tokenOf(t.engine.lock("ns", req([x("d")])));
    const w = pending(t.engine.waitForLocks("ns", wait([x("d")], { acquireTimeoutMs: 100 })));
    const behind = pending(t.engine.lock("ns", req([x("d")], { acquireTimeoutMs: 1_000 })));
    t.tick(99);
    expect(t.outcome(w)).toBeUndefined();
    t.tick(1);
    expect(t.outcome(w)).toEqual({ status: "timeout" });
    expect(t.engine.snapshot("ns").descriptors[0]?.queue).toEqual([{ mode: "exclusive" }]);
    t.engine.unlock("ns", { tokens: [holder] });
    tokenOf(t.outcome(behind));
  });

  it("a repeated requestId joins the running wait (its deadline the later one); another request with the id is a conflict", () => {
    const t = makeEngine();
    const holder = tokenOf(t.engine.lock("ns", req([x("d")])));
    const first = pending(t.engine.waitForLocks("ns", wait([x("d")], { requestId: "r", acquireTimeoutMs: 100 })));
    const again = t.engine.waitForLocks("ns", wait([x("d")], { requestId: "r", acquireTimeoutMs: 300 }));
    expect(again).toBe(first);
    expect(t.engine.snapshot("ns").waitingRequests).toBe(1);
    expect(() => t.engine.waitForLocks("ns", wait([s("d")], { requestId: "r" }))).toThrow(expect.objectContaining({ code: "REQUEST_ID_CONFLICT" }));
    expect(() => t.engine.lock("ns", req([x("d")], { requestId: "r", acquireTimeoutMs: 10 }))).toThrow(expect.objectContaining({ code: "REQUEST_ID_CONFLICT" }));
    t.tick(150);
    expect(t.outcome(first)).toBeUndefined();
    t.engine.unlock("ns", { tokens: [holder] });
    expect(t.outcome(first)).toEqual({ status: "free" });
    // Over: the id is free again, and a new wait with it starts afresh.
    expect(t.engine.waitForLocks("ns", wait([x("d")], { requestId: "r" }))).toEqual({ status: "free" });
  });

  it("abandoned, it leaves the queue; it never takes a fencing token", () => {
    const t = makeEngine();
    const before = t.engine.timestamps("ns", { count: 1 }).start;
    const holder = tokenOf(t.engine.lock("ns", req([x("d")])));
    const w = pending(t.engine.waitForLocks("ns", wait([x("d")])));
    expect(t.engine.abandon(w)).toBe(true);
    expect(t.engine.snapshot("ns").waitingRequests).toBe(0);
    t.engine.unlock("ns", { tokens: [holder] });
    const w2 = t.engine.waitForLocks("ns", wait([x("d")]));
    expect(w2).toEqual({ status: "free" });
    // Only the holder's grant took a number.
    expect(t.engine.timestamps("ns", { count: 1 }).start).toBe(before + 2);
  });
});
