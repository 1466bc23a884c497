import { LeaseholdError, type LockWatchSince, type LockWatchUpdate } from "@leasehold/protocol";
import { describe, expect, it } from "vitest";
import { LockEngine } from "../../src/engine/lock-engine.js";
import type { PendingLock } from "../../src/engine/pending-lock.js";
import type { ReplicationEntry } from "../../src/engine/replication-entries.js";
import { createCountingTokenSource } from "../../src/engine/token-source.js";
import { InMemoryLockService } from "../../src/service/in-memory-lock-service.js";
import { p, req, s, tokenOf, x } from "./engine-fixture.js";
import { imagesOf, wire } from "./replication-fixture.js";

/** A leader and a replica on one fake clock, the leader's feed recorded and applied to the replica. */
function pair() {
  let now = 1000;
  const clock = () => now;
  const entries: ReplicationEntry[] = [];
  const replica = new LockEngine({ clock, leaderId: "L", leaseMs: 1000, replica: true, tokenSource: createCountingTokenSource() });
  const leader = new LockEngine({
    clock,
    leaderId: "L",
    leaseMs: 1000,
    tokenSource: createCountingTokenSource(),
    replicationSink: (ns, entry) => {
      entries.push(wire(entry));
      replica.applyEntry(ns, wire(entry));
    },
  });
  return { leader, replica, entries, tick: (ms: number) => (now += ms), now: () => now };
}

/** The error code `f` throws, failing when it throws nothing. */
function codeOf(f: () => unknown): string {
  try {
    f();
  } catch (err) {
    if (err instanceof LeaseholdError) return `${err.code}: ${err.message}`;
    throw err;
  }
  throw new Error("did not throw");
}

describe("the change feed", () => {
  it("describes outcomes in the order they happened, as plain JSON", () => {
    const { leader, entries } = pair();
    const t1 = tokenOf(leader.lock("ns", req([x("a"), p("b", 2)])));
    leader.lock("ns", req([x("a")], { acquireTimeoutMs: 500, requestId: "r1", clientDescription: "w" }));
    leader.lock("ns", req([p("b", 3)]));
    leader.timestamps("ns", { count: 2 });
    leader.unlock("ns", { tokens: [t1] });
    leader.startTransactions("ns", { count: 1 });
    leader.acquireTimestampLease("ns", { name: "n", count: 1 });
    expect(entries.map((e) => e.type)).toEqual(["limit", "grant", "waiting", "limit", "grant", "counter", "release", "grant", "grant", "grant"]);
    // The first request brings b into use with its limit; the third changes it.
    expect(entries.shift()).toEqual({ type: "limit", descriptor: "b", limit: 2 });
    expect(entries[0]).toEqual({ type: "grant", kind: "lock", token: "t1", holds: [{ descriptor: "a", mode: "exclusive", fencingToken: 1 }, { descriptor: "b", mode: "permit", fencingToken: 2, limit: 2 }], allOrNone: true, max: 2, waitedMs: 0, next: 3 });
    expect(entries[1]).toMatchObject({ type: "waiting", serial: 1, requestId: "r1", clientDescription: "w", remainingMs: 500, queuedOn: { descriptor: "a", mode: "exclusive" }, holds: [], next: 3 });
    expect(entries[2]).toEqual({ type: "limit", descriptor: "b", limit: 3 });
    expect(entries[4]).toEqual({ type: "counter", next: 6 });
    expect(entries[5]).toEqual({ type: "release", token: "t1", reason: "unlock" });
    // The waiter's grant names it and carries its specs (it has a requestId) and new fencing token.
    expect(entries[6]).toMatchObject({ type: "grant", kind: "lock", waiter: 1, requestId: "r1", specs: [{ descriptor: "a", mode: "exclusive" }], holds: [{ descriptor: "a", fencingToken: 6 }] });
    expect(entries[7]).toMatchObject({ type: "grant", kind: "immutable", startTimestamp: 7, next: 8 });
    expect(entries[8]).toMatchObject({ type: "grant", kind: "timestamp-lease", name: "n", leased: 8, count: 1, next: 10 });
  });

  it("says why tokens and waiters ended: lapse, timeout, revoke, abandon", () => {
    const { leader, entries, tick } = pair();
    const held = leader.lock("ns", req([x("a")]));
    const waiting = leader.lock("ns", req([x("a")], { acquireTimeoutMs: 100 }));
    leader.lock("ns", req([x("b"), x("c")]));
    const blocked = leader.lock("ns", req([x("b")], { acquireTimeoutMs: 5000 })) as PendingLock;
    tick(200);
    leader.advance();
    leader.abandon(blocked);
    leader.revoke("ns", { descriptors: ["c"], reason: "test" });
    tick(1000);
    leader.advance();
    const ends = entries.filter((e) => e.type === "release" || e.type === "waiter-ended").map((e) => ("reason" in e ? e.reason : ""));
    expect(ends).toEqual(["timeout", "abandon", "revoke", "lapse"]);
    expect(held.status).toBe("acquired");
    expect(waiting.status).toBe("waiting");
  });

  it("can be switched on and off with setReplicationSink", () => {
    const seen: string[] = [];
    const engine = new LockEngine({ leaseMs: 1000 });
    engine.lock("ns", req([x("a")]));
    engine.setReplicationSink((_ns, e) => seen.push(e.type));
    engine.lock("ns", req([x("b")]));
    engine.setReplicationSink(null);
    engine.lock("ns", req([x("c")]));
    expect(seen).toEqual(["grant"]);
  });
});

describe("a replica", () => {
  it("refuses every request and lets no lease lapse until promoted, then restarts every lease at a full leaseMs", () => {
    const { leader, replica, tick } = pair();
    const t1 = tokenOf(leader.lock("ns", req([x("a")])));
    expect(codeOf(() => replica.lock("ns", req([x("b")])))).toMatch(/^UNAVAILABLE: .*replica/);
    expect(codeOf(() => replica.refresh("ns", { tokens: [t1] }))).toMatch(/^UNAVAILABLE/);
    expect(replica.nextDeadline()).toBe(Infinity);
    tick(5000);
    replica.advance();
    expect(replica.snapshot("ns").heldTokens).toBe(1);
    const summary = replica.promote();
    expect(summary).toMatchObject({ namespaces: 1, tokens: 1, waiters: 0 });
    expect(replica.refresh("ns", { tokens: [t1] }).refreshed).toEqual([t1]);
    tick(999);
    replica.advance();
    expect(replica.snapshot("ns").heldTokens).toBe(1);
    tick(1);
    replica.advance();
    expect(replica.snapshot("ns").heldTokens).toBe(0);
  });

  it("refuses an entry that does not fit, changing nothing", () => {
    const { leader, replica, entries } = pair();
    leader.lock("ns", req([x("a")]));
    leader.lock("ns", req([s("b")]));
    leader.lock("ns", req([x("c")], { acquireTimeoutMs: 0 }));
    const before = wire(replica.exportNamespace("ns"));
    const misfits: [string, unknown][] = [
      ["a release of an unknown token", { type: "release", token: "nope", reason: "unlock" }],
      ["a grant of a live token (the same grant again)", entries[0]],
      ["an exclusive grant on a held descriptor", { type: "grant", kind: "lock", token: "t9", holds: [{ descriptor: "a", mode: "exclusive", fencingToken: 1 }], allOrNone: true, max: 1, waitedMs: 0, next: 9 }],
      ["a shared grant next to an exclusive holder", { type: "grant", kind: "lock", token: "t9", holds: [{ descriptor: "a", mode: "shared", fencingToken: 5 }], allOrNone: true, max: 1, waitedMs: 0, next: 9 }],
      ["a fencing token at or above the counter", { type: "grant", kind: "lock", token: "t9", holds: [{ descriptor: "z", mode: "exclusive", fencingToken: 9 }], allOrNone: true, max: 1, waitedMs: 0, next: 9 }],
      ["an unknown waiter's end", { type: "waiter-ended", serial: 4, reason: "timeout" }],
      ["a limit below 1", { type: "limit", descriptor: "a", limit: 0 }],
      ["a malformed entry (no holds)", { type: "grant", kind: "lock", token: "t9", allOrNone: true, max: 1, waitedMs: 0, next: 9 }],
      ["a malformed entry (bad mode)", { type: "grant", kind: "lock", token: "t9", holds: [{ descriptor: "q", mode: "sole", fencingToken: 1 }], allOrNone: true, max: 1, waitedMs: 0, next: 9 }],
      ["an entry of an unknown type", { type: "refresh", token: "t1" }],
      ["not an object", "grant"],
    ];
    for (const [what, entry] of misfits) {
      expect(codeOf(() => replica.applyEntry("ns", entry as ReplicationEntry)), what).toMatch(/^INVALID_ARGUMENT: replication for namespace "ns": entry/);
      expect(replica.exportNamespace("ns"), what).toEqual(before);
    }
    // Nothing is created for a namespace the replica does not hold either.
    expect(codeOf(() => replica.applyEntry("other", { type: "release", token: "t1", reason: "unlock" }))).toMatch(/^INVALID_ARGUMENT/);
    expect(replica.namespaceNames()).toEqual(["ns"]);
  });

  it("restores only into a table that does not hold the namespace, and refuses a bad image whole", () => {
    const { leader, replica, now } = pair();
    leader.lock("ns", req([x("a")]));
    leader.lock("ns", req([x("a")], { acquireTimeoutMs: 500 }));
    const [image] = imagesOf(leader);
    expect(codeOf(() => replica.restoreNamespace("ns", image!))).toMatch(/^INVALID_ARGUMENT: .*already in this table/);
    const fresh = new LockEngine({ leaderId: "L", replica: true, clock: now });
    const bad = [
      { ...image!, tokens: [...image!.tokens, image!.tokens[0]!] },
      { ...image!, queues: [] },
      { ...image!, format: 99 },
      { ...image!, namespace: "other" },
      { ...image!, next: 1 },
    ];
    for (const b of bad) expect(codeOf(() => fresh.restoreNamespace("ns", b))).toMatch(/^INVALID_ARGUMENT: replication for namespace "ns": (image|namespace)/);
    expect(fresh.namespaceNames()).toEqual([]);
    fresh.restoreNamespace("ns", wire(image!));
    expect(fresh.exportNamespace("ns")).toEqual(image);
  });

  it("is the only kind of table that restores, applies or promotes", () => {
    const serving = new LockEngine();
    expect(codeOf(() => serving.applyEntry("ns", { type: "counter", next: 5 }))).toMatch(/not a replica/);
    expect(codeOf(() => serving.restoreNamespace("ns", serving.exportNamespace("ns")))).toMatch(/not a replica/);
    expect(codeOf(() => serving.promote())).toMatch(/not a replica/);
  });
});

describe("promotion", () => {
  it("keeps a waiter's place for its re-sent requestId and drops unclaimed ones at the end of the claim window", () => {
    const { leader, replica, tick } = pair();
    const holder = tokenOf(leader.lock("ns", req([x("m")])));
    leader.lock("ns", req([x("m")], { acquireTimeoutMs: 10_000, requestId: "kept" }));
    leader.lock("ns", req([x("b"), x("m")], { acquireTimeoutMs: 10_000 })); // holds b, queues on m, no requestId
    leader.lock("ns", req([x("c"), x("m")], { acquireTimeoutMs: 10_000, requestId: "gone" })); // holds c, queues on m
    expect(replica.promote({ claimWindowMs: 500 })).toMatchObject({ waiters: 3, claimUntil: 1500 });
    const again = replica.lock("ns", req([x("m")], { acquireTimeoutMs: 10_000, requestId: "kept" }));
    expect(again.status).toBe("waiting");
    tick(499);
    replica.advance();
    expect(replica.snapshot("ns").waitingRequests).toBe(3);
    tick(1);
    replica.advance();
    // The two unclaimed ones left the queue on m and released b and c; the claimed one kept its place.
    expect(replica.snapshot("ns")).toMatchObject({ waitingRequests: 1, descriptors: [{ descriptor: "m", queue: [{ mode: "exclusive" }] }] });
    expect(replica.unlock("ns", { tokens: [holder] }).unlocked).toEqual([holder]);
    expect(replica.liveRequest("ns", "kept")).toMatch(/^t/);
  });

  it("releases at the end of the window what was granted to an unclaimed waiter meanwhile", () => {
    const { leader, replica, tick } = pair();
    const holder = tokenOf(leader.lock("ns", req([x("a")])));
    leader.lock("ns", req([x("a")], { acquireTimeoutMs: 10_000, requestId: "late" }));
    replica.promote({ claimWindowMs: 100 });
    replica.unlock("ns", { tokens: [holder] });
    expect(replica.snapshot("ns").heldTokens).toBe(1);
    tick(100);
    replica.advance();
    expect(replica.snapshot("ns").heldTokens).toBe(0);
    expect(replica.metrics().abandonedTotal).toBe(1);
  });

  it("never mints a token equal to one the table carries", () => {
    const { leader, replica } = pair();
    leader.lock("ns", req([x("a")]));
    leader.lock("ns", req([x("b")]));
    replica.promote();
    // The replica's predictable source starts at t1 again: t1 and t2 are live, so it skips them.
    expect(tokenOf(replica.lock("ns", req([x("c")])))).toBe("t3");
  });

});

describe("lock watches across a promotion (PROTOCOL.md: logId changes exactly when the table starts empty)", () => {
  /** A follower of `ns` on `engine`: where it stands after each update. */
  const follow = (engine: LockEngine, ns: string, since: LockWatchSince | null) => engine.lockEvents(ns, since).update;
  const at = (u: LockWatchUpdate): LockWatchSince => ({ logId: u.logId, version: u.version });

  it("a promoted table keeps the log id and the watched prefixes; a follower gets a snapshot above every version it saw, with the carried locks, then events again", () => {
    const { leader, replica, tick } = pair();
    leader.registerLockWatches("ns", ["d"], 60_000);
    let seen = follow(leader, "ns", null);
    const held = tokenOf(leader.lock("ns", req([x("d1")])));
    leader.lock("ns", req([x("e1")])); // not watched
    seen = follow(leader, "ns", at(seen));
    expect(seen.type === "events" && seen.events.map((e) => e.kind)).toEqual(["lock"]);
    tick(10_000);
    replica.promote();
    const after = follow(replica, "ns", at(seen));
    expect(after.logId).toBe(seen.logId);
    expect(after.type).toBe("snapshot");
    expect(after.version).toBeGreaterThan(seen.version);
    expect(after.type === "snapshot" && after).toMatchObject({ prefixes: ["d"], locked: [{ descriptor: "d1", mode: "exclusive" }] });
    // From the snapshot on, the promoted table's own events follow, in order.
    replica.unlock("ns", { tokens: [held] });
    const next = follow(replica, "ns", at(after));
    expect(next.type === "events" && next.events.map((e) => [e.version, e.kind])).toEqual([[after.version + 1, "unlock"]]);
    // A fresh follower gets the same log id too.
    expect(follow(replica, "ns", null).logId).toBe(seen.logId);
  });

  it("the prefixes keep their registration's time: they lapse at the promoted table when they would have at the leader (--watch-ttl-ms), and a re-registration carried extends them", () => {
    const { leader, replica, tick } = pair();
    leader.registerLockWatches("ns", ["a", "b"], 10_000);
    tick(4_000);
    leader.registerLockWatches("ns", ["b"], 10_000); // b now lapses at 14,000 after the first
    replica.promote();
    tick(5_999);
    expect(follow(replica, "ns", null)).toMatchObject({ type: "snapshot", prefixes: ["a", "b"] });
    tick(1);
    expect(follow(replica, "ns", null)).toMatchObject({ type: "snapshot", prefixes: ["b"] });
    tick(4_000);
    expect(follow(replica, "ns", null)).toMatchObject({ type: "snapshot", prefixes: [] });
  });

  it("carried through a standby's image too (a standby that joined late, and a hand-over, restore images of the replica)", () => {
    const { leader, replica } = pair();
    leader.registerLockWatches("ns", [""], 60_000);
    leader.lock("ns", req([x("d1")]));
    const seen = follow(leader, "ns", null);
    // A second standby joins from the leader's image; a third from the first replica's (a hand-over's taker).
    const late = new LockEngine({ leaderId: "L", leaseMs: 1000, replica: true, clock: () => 0 });
    late.restoreNamespace("ns", wire(leader.exportNamespace("ns")));
    const taker = new LockEngine({ leaderId: "L", leaseMs: 1000, replica: true, clock: () => 0 });
    taker.restoreNamespace("ns", wire(replica.exportNamespace("ns")));
    for (const table of [late, taker]) {
      table.promote();
      const after = follow(table, "ns", at(seen));
      expect(after).toMatchObject({ type: "snapshot", logId: seen.logId, prefixes: [""], locked: [{ descriptor: "d1" }] });
      expect(after.version).toBeGreaterThan(seen.version);
    }
  });

  it("a namespace nobody watched gets a new log id at promotion: no follower can trust a run of events it never got", () => {
    const { leader, replica } = pair();
    leader.lock("ns", req([x("d1")]));
    const before = follow(leader, "ns", null);
    replica.promote();
    const after = follow(replica, "ns", at(before));
    expect(after.logId).not.toBe(before.logId);
    expect(after.type).toBe("snapshot");
  });

  it("a follower that saw events the standby never got (a release sent lazily, lost with its leader) is never answered events that skip the promoted table's own", () => {
    const clock = () => 1000;
    const replica = new LockEngine({ clock, leaderId: "L", leaseMs: 1000, replica: true });
    let lost = false;
    const leader = new LockEngine({ clock, leaderId: "L", leaseMs: 1000, replicationSink: (ns, e) => !lost && replica.applyEntry(ns, wire(e)) });
    leader.registerLockWatches("ns", [""], 60_000);
    const a = tokenOf(leader.lock("ns", req([x("a")])));
    leader.lock("ns", req([x("b")]));
    lost = true; // the leader dies before these reach the standby
    leader.unlock("ns", { tokens: [a] });
    leader.lock("ns", req([x("c")]));
    const seen = follow(leader, "ns", null);
    replica.promote();
    // The promoted table logs an event of its own before the follower asks.
    replica.lock("ns", req([x("d")]));
    const after = follow(replica, "ns", at(seen));
    expect(after.logId).toBe(seen.logId);
    expect(after.type === "snapshot" && after.locked.map((l) => l.descriptor)).toEqual(["a", "b", "d"]);
  });

  it("a follower ahead of the log (it saw a version the promoted table never heard of) gets a snapshot above its version, never events", () => {
    const { leader, replica } = pair();
    leader.registerLockWatches("ns", [""], 60_000);
    replica.promote();
    const now = follow(replica, "ns", null);
    const ahead = follow(replica, "ns", { logId: now.logId, version: now.version + 5 });
    expect(ahead.type).toBe("snapshot");
    expect(ahead.version).toBeGreaterThan(now.version + 5);
    replica.lock("ns", req([x("d1")]));
    expect(follow(replica, "ns", at(ahead))).toMatchObject({ type: "events", events: [{ version: ahead.version + 1, kind: "lock" }] });
  });
});

describe("InMemoryLockService passes replication through", () => {
  it("feeds a replica service, which serves the same tokens once promoted", async () => {
    const replica = new InMemoryLockService({ leaderId: "L", replica: true });
    const leader = new InMemoryLockService({ leaderId: "L", replicationSink: (ns, e) => replica.applyEntry(ns, wire(e)) });
    const granted = await leader.lock("ns", { locks: [{ descriptor: "a", mode: "exclusive" }] });
    if (granted.status !== "acquired") throw new Error("not granted");
    expect(replica.isReplica).toBe(true);
    await expect(replica.lock("ns", { locks: [{ descriptor: "b", mode: "exclusive" }] })).rejects.toMatchObject({ code: "UNAVAILABLE" });
    expect(replica.namespaceNames()).toEqual(["ns"]);
    expect(replica.exportNamespace("ns").tokens.map((t) => t.token)).toEqual([granted.token]);
    replica.promote();
    expect(replica.isReplica).toBe(false);
    expect((await replica.refresh("ns", { tokens: [granted.token] })).refreshed).toEqual([granted.token]);
    const denied = await replica.lock("ns", { locks: [{ descriptor: "a", mode: "exclusive" }] });
    expect(denied.status).toBe("timeout");
    await leader.close();
    await replica.close();
  });
});
