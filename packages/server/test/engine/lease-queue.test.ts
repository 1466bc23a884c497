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
