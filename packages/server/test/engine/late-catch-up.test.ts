import { describe, expect, it } from "vitest";
import { makeEngine, req, tokenOf, x } from "./engine-fixture.js";

// The fixture's engine: leaseMs 1,000 (validForMs 500), clock starting at 1,000, moved by tick().

describe("a late catch-up reaps in time order", () => {
  it("a waiter whose deadline passed before the holder's lease lapsed times out instead of being granted", () => {
    const t = makeEngine();
    tokenOf(t.engine.lock("ns", req([x("a")]))); // lapses at 2,000
    const early = t.engine.lock("ns", req([x("a")], { acquireTimeoutMs: 400 })); // deadline 1,400
    const late = t.engine.lock("ns", req([x("a")], { acquireTimeoutMs: 1_500 })); // deadline 2,500
    // Nothing ran on time: one catch-up at 3,000 covers the deadline (1,400), the lapse (2,000) and
    // the second deadline (2,500).
    t.tick(2_000);
    expect(t.outcome(early)).toEqual({ status: "timeout" });
    // The second waiter was still waiting at 2,000 when the lease lapsed: it is granted then.
    const granted = t.outcome(late);
    expect(granted).toMatchObject({ status: "acquired" });
    expect(t.lapses).toEqual([{ namespace: "ns", descriptors: 1 }]);
    expect(t.engine.metrics()).toMatchObject({ timeoutsTotal: 1, leaseLapsesTotal: 1, heldTokens: 1 });
  });

  it("lapses and deadlines interleave: each lapse grants only waiters still waiting at its time", () => {
    const t = makeEngine();
    tokenOf(t.engine.lock("ns", req([x("a")]))); // lapses at 2,000
    t.tick(300);
    tokenOf(t.engine.lock("ns", req([x("b")]))); // lapses at 2,300
    const onA = t.engine.lock("ns", req([x("a")], { acquireTimeoutMs: 1_800 })); // deadline 3,100
    // Queued first on "b", but its deadline comes before b's holder lapses.
    const onBTooEarly = t.engine.lock("ns", req([x("b")], { acquireTimeoutMs: 900 })); // deadline 2,200
    const onB = t.engine.lock("ns", req([x("b")], { acquireTimeoutMs: 1_600 })); // deadline 2,900
    t.tick(5_000);
    expect(t.outcome(onBTooEarly)).toEqual({ status: "timeout" });
    expect(t.outcome(onA)).toMatchObject({ status: "acquired" });
    expect(t.outcome(onB)).toMatchObject({ status: "acquired" });
  });

  it("a deadline equal to the lapse time: the lapse goes first (the waiter was still waiting)", () => {
    const t = makeEngine();
    tokenOf(t.engine.lock("ns", req([x("a")]))); // lapses at 2,000
    const waiter = t.engine.lock("ns", req([x("a")], { acquireTimeoutMs: 1_000 })); // deadline 2,000
    t.tick(1_500);
    expect(t.outcome(waiter)).toMatchObject({ status: "acquired" });
  });
});

describe("the lease queue", () => {
  it("lapses tokens in the order of their last renewal, not of their grant", () => {
    const t = makeEngine();
    // Descriptor counts tell the tokens apart in onLeaseLapse, which never sees a token.
    const one = tokenOf(t.engine.lock("ns", req([x("a")])));
    t.tick(10);
    tokenOf(t.engine.lock("ns", req([x("b"), x("c")])));
    t.tick(10);
    tokenOf(t.engine.lock("ns", req([x("d"), x("e"), x("f")])));
    t.tick(10);
    expect(t.engine.refresh("ns", { tokens: [one] }).refreshed).toEqual([one]); // now lapses last
    t.tick(985); // 2,015: only the two-descriptor token (granted at 1,010) has lapsed
    expect(t.lapses.map((l) => l.descriptors)).toEqual([2]);
    t.tick(10);
    expect(t.lapses.map((l) => l.descriptors)).toEqual([2, 3]);
    expect(t.engine.refresh("ns", { tokens: [one] }).refreshed).toEqual([one]);
    t.tick(2_000);
    expect(t.lapses.map((l) => l.descriptors)).toEqual([2, 3, 1]);
  });

  it("a late catch-up lapses many tokens in expiry order and grants their waiters in that order", () => {
    const t = makeEngine();
    const order: string[] = [];
    const waits: [string, ReturnType<typeof t.engine.lock>][] = [];
    for (const d of ["p", "q", "r"]) {
      tokenOf(t.engine.lock("ns", req([x(d)])));
      t.tick(1);
    }
    for (const d of ["r", "q", "p"]) waits.push([d, t.engine.lock("ns", req([x(d)], { acquireTimeoutMs: 10_000 }))]);
    t.tick(5_000);
    for (const [d, w] of waits) {
      const outcome = t.outcome(w);
      if (outcome !== undefined && !(outcome instanceof Error) && outcome.status === "acquired") order.push(`${d}:${outcome.acquired[0]!.fencingToken}`);
    }
    // Fencing tokens are handed out in grant order: p (lapsed first), then q, then r.
    const byFence = [...order].sort((a, b) => Number(a.split(":")[1]) - Number(b.split(":")[1])).map((e) => e.split(":")[0]);
    expect(byFence).toEqual(["p", "q", "r"]);
  });
});
