import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { LockEngine } from "../../src/engine/lock-engine.js";
import { LeaseQueue, type LeaseEntry } from "../../src/engine/lease-queue.js";
import { createCountingTokenSource } from "../../src/engine/token-source.js";
import { req, tokenOf, x } from "./engine-fixture.js";
import { wire } from "./replication-fixture.js";

interface Entry extends LeaseEntry<Entry> {
  readonly name: string;
}
const entry = (name: string): Entry => ({ name, leasePrev: null, leaseNext: null, expiresAt: 0 });

describe("the lease queue's head is always the entry that lapses first", () => {
  it("a renewal of the main list's only entry, in place, hands the head to a carried entry that now lapses first", () => {
    const q = new LeaseQueue<Entry>();
    const carried = entry("carried");
    const fresh = entry("fresh");
    q.append(carried, 1000);
    q.restart(carried, 2000); // a promotion: the carried lease restarts on its own list
    q.append(fresh, 2000); // granted after the promotion, lapsing at the same moment
    expect(q.nextExpiry()).toBe(2000);
    q.renew(fresh, 2300); // the main list's tail: renewed where it stands
    expect(q.head?.name).toBe("carried");
    expect(q.nextExpiry()).toBe(2000);
  });
});

/** One step of a table's life as the lease queue sees it (a clock that only moves forward). */
type Step = { kind: "tick"; ms: number } | { kind: "grant" } | { kind: "renew"; pick: number } | { kind: "remove"; pick: number };
const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ kind: fc.constant("tick" as const), ms: fc.integer({ min: 0, max: 400 }) }),
  fc.record({ kind: fc.constant("grant" as const) }),
  fc.record({ kind: fc.constant("renew" as const), pick: fc.nat() }),
  fc.record({ kind: fc.constant("remove" as const), pick: fc.nat() }),
);

describe("the lease queue against a model (every entry with its expiry)", () => {
  it("after any grants, renewals and removals, before and after a promotion's restart, the head is an entry that lapses first and reaping from it yields every entry in expiry order", () => {
    fc.assert(
      fc.property(fc.array(step, { maxLength: 40 }), fc.integer({ min: 0, max: 1_500 }), fc.array(step, { maxLength: 40 }), (before, carriedMs, after) => {
        const LEASE = 1_000;
        let now = 0;
        let serial = 0;
        const q = new LeaseQueue<Entry>();
        const model = new Map<Entry, number>();
        const check = (): void => {
          const min = Math.min(...model.values());
          expect(q.size).toBe(model.size);
          expect(q.nextExpiry()).toBe(model.size === 0 ? Infinity : min);
          if (q.head !== null) expect(model.get(q.head)).toBe(min);
        };
        const run = (s: Step): void => {
          const live = [...model.keys()];
          if (s.kind === "tick") now += s.ms;
          else if (s.kind === "grant") {
            const e = entry(`e${serial++}`);
            q.append(e, now + LEASE);
            model.set(e, now + LEASE);
          } else if (live.length > 0) {
            const e = live[s.pick % live.length]!;
            if (s.kind === "renew") {
              q.renew(e, now + LEASE);
              model.set(e, Math.max(model.get(e)!, now + LEASE)); // a renewal never shortens a lease
            } else {
              q.remove(e);
              model.delete(e);
            }
          }
          check();
        };
        before.forEach(run);
        // A promotion: every live entry restarts together on the carried list.
        const restartAt = now + Math.max(carriedMs, LEASE);
        for (const e of [...model.keys()]) {
          q.restart(e, restartAt);
          model.set(e, restartAt);
        }
        check();
        after.forEach(run);
        // Reaping takes the head until none is left: expiries never go down.
        let last = -Infinity;
        while (q.head !== null) {
          const head = q.head;
          expect(head.expiresAt).toBeGreaterThanOrEqual(last);
          last = head.expiresAt;
          q.remove(head);
          model.delete(head);
          check();
        }
      }),
      { numRuns: 2_000 },
    );
  });
});

describe("a promoted table's carried lease lapses on time while a token granted after the promotion is refreshed", () => {
  it("found by the replication property (CI, seed -248549850): the carried lock outlived its lease by the other token's refresh", () => {
    let now = 1000;
    const clock = () => now;
    const replica = new LockEngine({ clock, leaderId: "L", leaseMs: 1000, replica: true, tokenSource: createCountingTokenSource() });
    const leader = new LockEngine({ clock, leaderId: "L", leaseMs: 1000, tokenSource: createCountingTokenSource(), replicationSink: (ns, e) => replica.applyEntry(ns, wire(e)) });
    tokenOf(leader.lock("b", req([x("d1")])));
    now += 2;
    replica.promote();
    const fresh = tokenOf(replica.lock("a", req([x("d2")]))); // lapses when the carried lease does
    now += 300;
    expect(replica.refresh("a", { tokens: [fresh] }).refreshed).toEqual([fresh]);
    now += 700; // the carried lease's end: 1,000 ms after the promotion, never refreshed
    replica.advance();
    expect(replica.metrics().heldTokens).toBe(1);
    expect(tokenOf(replica.lock("b", req([x("d1")])))).toBeTypeOf("string");
  });
});
