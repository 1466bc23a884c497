import { describe, expect, it } from "vitest";
import { makeEngine, req, tokenOf, x } from "./engine-fixture.js";

describe("unlock, refresh and leases", () => {
  it("unlock is idempotent and answers each held token once, in request order", () => {
    const { engine } = makeEngine();
    const a = tokenOf(engine.lock("ns", req([x("a")])));
    const b = tokenOf(engine.lock("ns", req([x("b")])));
    expect(engine.unlock("ns", { tokens: [b, "nope", a, b] })).toEqual({ unlocked: [b, a] });
    expect(engine.unlock("ns", { tokens: [a, b] })).toEqual({ unlocked: [] });
    expect(engine.unlock("never-used", { tokens: [a] })).toEqual({ unlocked: [] });
    expect(engine.metrics()).toMatchObject({ heldLocks: 0, heldTokens: 0, unlocksTotal: 2 });
  });

  it("a token is not valid in another namespace", () => {
    const { engine } = makeEngine();
    const a = tokenOf(engine.lock("one", req([x("a")])));
    expect(engine.unlock("two", { tokens: [a] }).unlocked).toEqual([]);
    expect(engine.refresh("two", { tokens: [a] }).refreshed).toEqual([]);
  });

  it("refresh answers the tokens still held with one lease and ignores unknown ones", () => {
    const { engine } = makeEngine();
    const a = tokenOf(engine.lock("ns", req([x("a")])));
    expect(engine.refresh("ns", { tokens: ["zzz", a, a] })).toEqual({
      refreshed: [a],
      lease: { leaderId: "leader-1", validForMs: 500 },
    });
  });

  it("a token not refreshed for leaseMs lapses, its waiters are granted, and refresh never revives it", () => {
    const t = makeEngine();
    const a = tokenOf(t.engine.lock("ns", req([x("a"), x("b")])));
    const w = t.engine.lock("ns", req([x("b")], { acquireTimeoutMs: 5_000 }));
    t.tick(600);
    t.engine.refresh("ns", { tokens: [a] });
    t.tick(999);
    expect(t.outcome(w)).toBeUndefined();
    t.tick(1);
    tokenOf(t.outcome(w));
    expect(t.lapses).toEqual([{ namespace: "ns", descriptors: 2 }]);
    expect(t.engine.refresh("ns", { tokens: [a] }).refreshed).toEqual([]);
    expect(t.engine.unlock("ns", { tokens: [a] }).unlocked).toEqual([]);
    expect(t.engine.metrics().leaseLapsesTotal).toBe(1);
  });

  it("an expired but not yet reaped token is treated as lapsed by every operation", () => {
    let now = 0;
    const t = makeEngine({ clock: () => now });
    const a = tokenOf(t.engine.lock("ns", req([x("a")])));
    now = 1_000; // no advance(): the next operation must catch up by itself
    expect(t.engine.refresh("ns", { tokens: [a] }).refreshed).toEqual([]);
    tokenOf(t.engine.lock("ns", req([x("a")])));
  });

  it("reaping visits only what expires (plus one), never everything held", () => {
    const t = makeEngine();
    const old: string[] = [];
    for (let i = 0; i < 10; i++) old.push(tokenOf(t.engine.lock("ns", req([x(`old-${i}`)]))));
    t.tick(500);
    for (let i = 0; i < 10_000; i++) tokenOf(t.engine.lock("ns", req([x(`new-${i}`)])));
    const before = t.engine.reapVisits;
    t.tick(500);
    expect(t.engine.reapVisits - before).toBeLessThanOrEqual(11);
    expect(t.engine.metrics().heldTokens).toBe(10_000);
    expect(t.lapses).toHaveLength(10);
  });

  it("nextDeadline is the earliest of lease expiries and waiter deadlines", () => {
    const t = makeEngine();
    expect(t.engine.nextDeadline()).toBe(Infinity);
    tokenOf(t.engine.lock("ns", req([x("a")])));
    expect(t.engine.nextDeadline()).toBe(t.now() + 1_000);
    t.engine.lock("ns", req([x("a")], { acquireTimeoutMs: 10 }));
    expect(t.engine.nextDeadline()).toBe(t.now() + 10);
  });
});
