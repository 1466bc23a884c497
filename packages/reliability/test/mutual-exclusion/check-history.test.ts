import { describe, expect, it } from "vitest";
import {
  checkFencingOrder,
  checkHistory,
  checkLeaseOverlap,
  checkNoLostWrites,
  checkStaleRefused,
  checkWellFormed,
  type GrantEvent,
  type History,
  type HoldMode,
  type ReleaseEvent,
  type ResourceOperation,
} from "../../src/history/index.js";

// Small hand-made histories. Times are plain numbers (ms); the lease guarantee is 100 ms unless said.

function grant(holder: string, mode: HoldMode, fencingToken: number, sent: number, received: number, guarantee = sent + 100, descriptor = "d"): GrantEvent {
  return { holder, descriptor, mode, fencingToken, requestSentAt: sent, grantReceivedAt: received, guaranteeEndsAt: guarantee };
}

function release(holder: string, releasedAt: number): ReleaseEvent {
  return { holder, releasedAt };
}

function history(parts: {
  grants: GrantEvent[];
  releases?: ReleaseEvent[] | undefined;
  ops?: Omit<ResourceOperation, "seq">[] | undefined;
  final?: Record<string, number> | undefined;
}): History {
  return {
    grants: parts.grants,
    releases: parts.releases ?? [],
    operations: (parts.ops ?? []).map((op, seq) => ({ ...op, seq })),
    finalCounters: parts.final ?? { d: 0 },
  };
}

/** An operation of `g` at `at`. */
function op(g: GrantEvent, kind: "read" | "write", at: number, accepted: boolean, value: number): Omit<ResourceOperation, "seq"> {
  return { descriptor: g.descriptor, holder: g.holder, fencingToken: g.fencingToken, mode: g.mode, kind, at, accepted, value };
}

/** A clean history: two exclusive increments, two overlapping shared readers, and a paused holder refused. */
function cleanHistory(): History {
  const a = grant("a", "exclusive", 1, 0, 2);
  const r1 = grant("r1", "shared", 2, 30, 32);
  const r2 = grant("r2", "shared", 3, 31, 33);
  const p = grant("p", "exclusive", 4, 60, 62); // reads, pauses past its guarantee (160)
  const b = grant("b", "exclusive", 5, 61, 300, 400); // granted once p lapsed, then renewed at 300
  return history({
    grants: [a, r1, r2, p, b],
    releases: [release("a", 20), release("r1", 50), release("r2", 55), release("b", 320), release("p", 400)],
    ops: [
      op(a, "read", 3, true, 0),
      op(a, "write", 4, true, 1),
      op(r2, "read", 34, true, 1),
      op(r1, "read", 35, false, 1), // older shared token after a newer one: refused
      op(p, "read", 63, true, 1),
      op(b, "read", 301, true, 1),
      op(b, "write", 302, true, 2),
      op(p, "write", 390, false, 2), // the paused holder's write, after b's: refused
    ],
    final: { d: 2 },
  });
}

describe("checkHistory", () => {
  it("passes a clean history with every rule at 0 and counts what it checked", () => {
    const report = checkHistory(cleanHistory());
    for (const r of report.all) expect(r, r.rule).toMatchObject({ violations: 0, examples: [] });
    expect(report.violations).toBe(0);
    expect(report.leaseOverlap.checked).toBe(5);
    expect(report.staleRefused.checked).toBe(8);
  });

  it("sums the violations of every rule", () => {
    const h = cleanHistory();
    const broken: History = { ...h, finalCounters: { d: 1 } };
    expect(checkHistory(broken).violations).toBe(1);
  });
});

describe("(a) checkLeaseOverlap", () => {
  it("flags an exclusive grant received inside another holder's guarantee", () => {
    const h = history({ grants: [grant("a", "exclusive", 1, 0, 1), grant("b", "exclusive", 2, 10, 50)], releases: [release("a", 120), release("b", 60)] });
    const r = checkLeaseOverlap(h);
    expect(r.violations).toBe(1);
    expect(r.examples[0]).toMatch(/exclusive holder b .* inside the lease of exclusive holder a/);
  });

  it("flags a shared grant inside an exclusive guarantee, and an exclusive one inside a shared guarantee", () => {
    const sharedInside = history({ grants: [grant("x", "exclusive", 1, 0, 1), grant("s", "shared", 2, 5, 10)] });
    const exclusiveInside = history({ grants: [grant("s", "shared", 1, 0, 1), grant("x", "exclusive", 2, 5, 10)] });
    expect(checkLeaseOverlap(sharedInside).violations).toBe(1);
    expect(checkLeaseOverlap(exclusiveInside).violations).toBe(1);
  });

  it("finds an overlap hidden behind a shorter interval in between", () => {
    // x's guarantee runs to 100; s1 (shared, short) starts and ends inside; y starts at 50.
    const h = history({
      grants: [grant("x", "exclusive", 1, 0, 1), grant("s1", "shared", 2, 2, 3, 20), grant("y", "exclusive", 3, 4, 50)],
      releases: [release("s1", 10)],
    });
    expect(checkLeaseOverlap(h).violations).toBe(2); // s1 inside x, y inside x
  });

  it("lets shared guarantees overlap, and guarantees that only touch or that ended by release", () => {
    const h = history({
      grants: [
        grant("s1", "shared", 1, 0, 1),
        grant("s2", "shared", 2, 0, 2),
        grant("x", "exclusive", 3, 5, 101, 200), // s1 ends at 100, s2 at 100: touches, not overlap? starts at 101
        grant("y", "exclusive", 4, 6, 150, 300), // x released at 150 exactly
      ],
      releases: [release("x", 150)],
    });
    expect(checkLeaseOverlap(h).violations).toBe(0);
  });

  it("ignores a guarantee that had run out before the grant arrived", () => {
    const h = history({ grants: [grant("late", "exclusive", 1, 0, 150), grant("b", "exclusive", 2, 10, 160)] });
    expect(checkLeaseOverlap(h).violations).toBe(0);
  });

  it("keeps descriptors apart", () => {
    const h = history({ grants: [grant("a", "exclusive", 1, 0, 1, 100, "d1"), grant("b", "exclusive", 1, 0, 2, 100, "d2")] });
    expect(checkLeaseOverlap(h).violations).toBe(0);
  });
});

describe("(b) checkFencingOrder", () => {
  it("flags a lower token for a request sent after an earlier grant was received", () => {
    const h = history({ grants: [grant("a", "shared", 5, 0, 1), grant("b", "shared", 4, 2, 3)] });
    const r = checkFencingOrder(h);
    expect(r.violations).toBe(1);
    expect(r.examples[0]).toMatch(/holder b got token 4, not above token 5 of shared holder a/);
  });

  it("flags a lower token for a conflicting grant received later, even when its request was queued first", () => {
    const h = history({
      grants: [grant("a", "exclusive", 5, 0, 1), grant("b", "exclusive", 4, 0.5, 50)],
      releases: [release("a", 40)],
    });
    expect(checkFencingOrder(h).violations).toBe(1);
  });

  it("flags repeated tokens on one descriptor", () => {
    const h = history({ grants: [grant("a", "shared", 7, 0, 1), grant("b", "shared", 7, 0, 1)] });
    expect(checkFencingOrder(h).violations).toBe(1);
  });

  it("does not order concurrent shared grants, nor conflicting ones that arrived after their guarantee", () => {
    const shared = history({ grants: [grant("a", "shared", 5, 0, 2), grant("b", "shared", 4, 1, 3)] });
    const stale = history({ grants: [grant("a", "exclusive", 5, 0, 150), grant("b", "exclusive", 4, 1, 200)] });
    expect(checkFencingOrder(shared).violations).toBe(0);
    expect(checkFencingOrder(stale).violations).toBe(0);
  });

  it("passes increasing tokens and keeps descriptors apart", () => {
    const h = history({
      grants: [grant("a", "exclusive", 1, 0, 1, 100, "d1"), grant("b", "exclusive", 2, 2, 3), grant("c", "exclusive", 1, 4, 5, 100, "d2")],
    });
    expect(checkFencingOrder(h).violations).toBe(0);
  });
});

describe("(c) checkStaleRefused", () => {
  const older = grant("old", "exclusive", 1, 0, 1);
  const newer = grant("new", "exclusive", 2, 200, 201);

  it("flags a stale operation that was accepted", () => {
    const h = history({ grants: [older, newer], ops: [op(older, "read", 2, true, 0), op(newer, "read", 202, true, 0), op(older, "write", 203, true, 1)] });
    const r = checkStaleRefused(h);
    expect(r.violations).toBe(1);
    expect(r.examples[0]).toMatch(/write #2 .* was accepted after the resource had seen token 2/);
  });

  it("flags a current operation that was refused", () => {
    const h = history({ grants: [older, newer], ops: [op(older, "read", 2, true, 0), op(newer, "read", 202, false, 0)] });
    expect(checkStaleRefused(h).violations).toBe(1);
  });

  it("passes an old holder's operation accepted before any newer token reached the resource", () => {
    const h = history({ grants: [older, newer], ops: [op(older, "read", 2, true, 0), op(older, "write", 190, true, 1), op(newer, "read", 202, true, 1)] });
    expect(checkStaleRefused(h).violations).toBe(0);
  });
});

describe("(d) checkNoLostWrites", () => {
  const a = grant("a", "exclusive", 1, 0, 1);
  const ops = [op(a, "read", 2, true, 0), op(a, "write", 3, true, 1), op(a, "read", 4, true, 1), op(a, "write", 5, true, 2)];

  it("flags each lost increment", () => {
    const r = checkNoLostWrites(history({ grants: [a], ops, final: { d: 1 } }));
    expect(r.violations).toBe(1);
    expect(r.examples[0]).toMatch(/final counter 1 < 2 acknowledged increments: 1 lost/);
  });

  it("flags increments that were never acknowledged, and a missing final counter", () => {
    expect(checkNoLostWrites(history({ grants: [a], ops, final: { d: 5 } })).violations).toBe(3);
    expect(checkNoLostWrites(history({ grants: [a], ops, final: {} })).violations).toBe(1);
  });

  it("does not count refused writes as acknowledged", () => {
    const refused = [...ops, op(a, "write", 6, false, 2)];
    expect(checkNoLostWrites(history({ grants: [a], ops: refused, final: { d: 2 } })).violations).toBe(0);
  });
});

describe("checkWellFormed", () => {
  const a = grant("a", "exclusive", 1, 0, 1);
  const s = grant("s", "shared", 2, 0, 1, 100, "e");

  it("flags operations without a grant, with another token, outside the hold, or writing under a shared lock", () => {
    const h = history({
      grants: [a, s],
      releases: [release("a", 10)],
      ops: [
        { ...op(a, "read", 2, true, 0), holder: "ghost" },
        { ...op(a, "read", 3, true, 0), fencingToken: 9 },
        op(a, "read", 0.5, true, 0),
        op(a, "read", 11, true, 0),
        op(s, "write", 5, true, 1),
      ],
      final: { d: 0, e: 1 },
    });
    expect(checkWellFormed(h).violations).toBe(5);
  });

  it("flags unknown and repeated releases", () => {
    const h = history({ grants: [a], releases: [release("a", 10), release("a", 11), release("nobody", 5)] });
    expect(checkWellFormed(h).violations).toBe(2);
  });
});
