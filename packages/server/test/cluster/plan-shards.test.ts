import { describe, expect, it } from "vitest";
import type { ShardLease } from "../../src/cluster/coordinator.js";
import { observeRows, planShards, type PlanInput, type Seen } from "../../src/cluster/plan-shards.js";

const row = (shard: number, holder: string | null, opts: Partial<ShardLease> = {}): ShardLease => ({
  shard,
  holder,
  url: holder === null ? null : `http://${holder}`,
  leaderId: holder === null ? null : `${holder}-${shard}`,
  incarnation: holder === null ? null : `${holder}-incarnation`,
  epoch: 1,
  version: 10,
  expired: holder === null,
  transitions: 1,
  standbyId: null,
  standbyIncarnation: null,
  inSync: false,
  ...opts,
});

const input = (leases: ShardLease[], over: Partial<PlanInput> = {}): PlanInput => ({
  leases,
  // Every row just seen as it is: a free one was released moments ago (a test of waiting passes its own).
  seen: leases.map((l) => ({ version: l.version, at: 1_000 })),
  now: 1_000,
  leaderLeaseMs: 300,
  serverId: "a",
  // A row is this process's own with its incarnation: `${serverId}-incarnation`, as row() writes.
  incarnation: `${over.serverId ?? "a"}-incarnation`,
  members: ["a", "b"],
  led: leases.map((l) => l.holder === "a"),
  ...over,
});

describe("planShards", () => {
  it("a member that does not answer counts in nobody's share and is never a balance target (issue 29: a crash was followed by a balance to the dead server)", () => {
    // 64 shards, three members; b was killed: its shards were taken over by a (now 32) and c (32),
    // and its heartbeat row is still fresh. Counted, b is short of its 21 and a gives a shard up.
    const leases = Array.from({ length: 64 }, (_, s) => row(s, s % 2 === 0 ? "a" : "c"));
    const members = ["a", "b", "c"];
    expect(planShards(input(leases, { members }))).toMatchObject({ release: 62, share: 22 });
    // Silent (no probe answered within a leader lease): a's share is half, nobody is short.
    expect(planShards(input(leases, { members, silent: ["b"] }))).toMatchObject({ release: null, share: 32 });
  });

  it("leaves an expired row naming an in-sync standby to that very process for one more leader lease", () => {
    // c died; its row names b (this incarnation) as its in-sync standby.
    const leases = [row(0, "c", { expired: true, standbyId: "b", standbyIncarnation: "b-incarnation", inSync: true })];
    const at = (now: number, over: Partial<PlanInput>) => planShards(input(leases, { now, members: ["a", "b"], led: [false], ...over })).take;
    // The standby takes it after one leader lease, as after any crash.
    expect(at(1_300, { serverId: "b" })).toEqual([0]);
    // Any other member (and a restarted b: another incarnation) waits a second lease.
    expect(at(1_300, {})).toEqual([]);
    expect(at(1_300, { serverId: "b", incarnation: "b-restarted" })).toEqual([]);
    expect(at(1_600, {})).toEqual([0]);
    // Not in sync: nothing to wait for.
    const behind = [row(0, "c", { expired: true, standbyId: "b", standbyIncarnation: "b-incarnation", inSync: false })];
    expect(planShards(input(behind, { now: 1_300, led: [false] })).take).toEqual([0]);
  });

  it("takes released shards only up to its share (⌊S/n⌋, one more for the first S mod n members)", () => {
    const leases = [0, 1, 2, 3, 4].map((s) => row(s, null));
    expect(planShards(input(leases))).toMatchObject({ take: [0, 1, 2], share: 3, release: null });
    // b starts looking where its share would start (after a's 3), so a and b taking at once try different rows first.
    expect(planShards(input(leases, { serverId: "b", led: leases.map(() => false) }))).toMatchObject({ take: [3, 4], share: 2 });
  });

  it("cold start: never-led rows go by the share among all live members, joiners counted, each server from its own offset", () => {
    const leases = Array.from({ length: 64 }, (_, s) => row(s, null, { epoch: 0 }));
    const members = ["a", "b", "c"];
    // a's join wait ended first; b and c, started with it, are still in theirs. Counting them only
    // as takers of released shards, a took all 64 and they collided with it row by row.
    const a = planShards(input(leases, { members, joining: ["b", "c"] }));
    expect(a.take).toEqual(Array.from({ length: 22 }, (_, i) => i));
    const b = planShards(input(leases, { serverId: "b", members, joining: ["c"], led: leases.map(() => false) }));
    expect(b.take).toEqual(Array.from({ length: 21 }, (_, i) => 22 + i));
    const c = planShards(input(leases, { serverId: "c", members, led: leases.map(() => false) }));
    expect(c.take).toEqual(Array.from({ length: 21 }, (_, i) => 43 + i));
    // Disjoint, and together every shard.
    expect(new Set([...a.take, ...b.take, ...c.take]).size).toBe(64);
    // A released row (a shard led before) still goes by the ready members' share: a takes it at once.
    const released = leases.map((l) => (l.shard === 5 ? row(5, null, { epoch: 3 }) : row(l.shard, "b")));
    expect(planShards(input(released, { members, joining: ["c"], led: released.map(() => false) })).take).toEqual([5]);
  });

  it("takes a released shard whatever its share once nobody took it for a whole leader lease (the member short of its share is gone)", () => {
    // a leads 2 (its share, with c counted) and b 1; c was killed moments ago and still counts, so
    // shard 3, released by a SIGTERMed server, is below nobody's share but c's.
    const leases = [row(0, "a"), row(1, "a"), row(2, "b"), row(3, null, { version: 11 })];
    const members = ["a", "b", "c"];
    const seenAt = (at: number) => leases.map((l) => ({ version: l.version, at }));
    expect(planShards(input(leases, { members, seen: seenAt(800) })).take).toEqual([]);
    expect(planShards(input(leases, { members, seen: seenAt(700) })).take).toEqual([3]);
    // A never-led row (epoch 0, a cluster's cold start) goes by the shares alone, however long it sat.
    const cold = leases.map((l) => (l.shard === 3 ? row(3, null, { version: 11, epoch: 0 }) : l));
    expect(planShards(input(cold, { members, seen: seenAt(0) })).take).toEqual([]);
    // A row that changed since (taken and released again) starts its lease over.
    const seen = seenAt(0);
    seen[3] = { version: 10, at: 0 };
    expect(planShards(input(leases, { members, seen })).take).toEqual([]);
  });

  it("takes an expired shard only after its row was seen unchanged for a whole leader lease, whatever the share", () => {
    const leases = [row(0, "a"), row(1, "a"), row(2, "b", { expired: true })];
    const members = ["a"];
    expect(planShards(input(leases, { members, seen: leases.map((l) => ({ version: l.version, at: 800 })) })).take).toEqual([]);
    expect(planShards(input(leases, { members, seen: leases.map((l) => ({ version: l.version, at: 700 })) })).take).toEqual([2]);
    // A live (unexpired) lease is never taken, however long it looked unchanged.
    const live = [row(0, "b"), row(1, "b")];
    expect(planShards(input(live, { members: ["a", "b"], seen: live.map((l) => ({ version: l.version, at: 0 })) })).take).toEqual([]);
    // Over its share, it still takes a dead leader's shard (availability first).
    const full = [row(0, "a"), row(1, "a"), row(2, "a"), row(3, "b", { expired: true })];
    expect(planShards(input(full, { members: ["a", "b"], seen: full.map((l) => ({ version: l.version, at: 0 })) })).take).toEqual([3]);
  });

  it("gives up one surplus shard only while another live member is below its share (hysteresis)", () => {
    const lopsided = [row(0, "a"), row(1, "a"), row(2, "a"), row(3, "b")];
    expect(planShards(input(lopsided)).release).toBe(2);
    const balanced = [row(0, "a"), row(1, "a"), row(2, "b"), row(3, "b")];
    expect(planShards(input(balanced)).release).toBeNull();
    // 3 of 5 with a share of 3 is not surplus; b at its share of 2 is not short.
    const odd = [row(0, "a"), row(1, "a"), row(2, "a"), row(3, "b"), row(4, "b")];
    expect(planShards(input(odd)).release).toBeNull();
    // Nothing is given up while a shard is free (it goes to whoever is short first).
    const withFree = [row(0, "a"), row(1, "a"), row(2, "a"), row(3, null)];
    expect(planShards(input(withFree)).release).toBeNull();
  });

  it("a joiner counts in nobody's share: a released shard is taken at once by the server that can take it", () => {
    // 8 shards: a leads 4; b stopped and released its 4; c has just joined (its join wait runs).
    const leases = [0, 1, 2, 3, 4, 5, 6, 7].map((s) => (s < 4 ? row(s, "a") : row(s, null)));
    // Under the old rule (c counted), a is at its share of 8/2 = 4 and declines: the shards wait for c.
    expect(planShards(input(leases, { members: ["a", "c"] }))).toMatchObject({ take: [], share: 4 });
    // c joining: a's share is all 8, so it takes the 4 released shards now.
    expect(planShards(input(leases, { members: ["a", "c"], joining: ["c"] }))).toMatchObject({ take: [4, 5, 6, 7], share: 8, release: null });
    // With another ready server b, the released shards are split by the shares of a and b only.
    expect(planShards(input(leases, { members: ["a", "b", "c"], joining: ["c"], led: leases.map((l) => l.holder === "a") }))).toMatchObject({ take: [], share: 4 });
    const bLed = leases.map(() => false);
    expect(planShards(input(leases, { serverId: "b", members: ["a", "b", "c"], joining: ["c"], led: bLed }))).toMatchObject({ take: [4, 5, 6, 7], share: 4 });
    // This server is never treated as joining by its own plan (it plans only past its wait).
    expect(planShards(input(leases, { serverId: "c", members: ["a", "c"], joining: ["c"], led: bLed })).share).toBe(4);
  });

  it("a stopping member has left the list: its released shards go to the servers below their share without it", () => {
    // a, b, c with 6 shards, 2 each; c stops and releases shards 4 and 5.
    const leases = [row(0, "a"), row(1, "a"), row(2, "b"), row(3, "b"), row(4, null), row(5, null)];
    // Still counted (heartbeat young), a and b are at their share of 2 and both decline.
    expect(planShards(input(leases, { members: ["a", "b", "c"] })).take).toEqual([]);
    expect(planShards(input(leases, { serverId: "b", members: ["a", "b", "c"], led: leases.map((l) => l.holder === "b") })).take).toEqual([]);
    // Once it left, each has a share of 3 and takes one: every released shard is taken at once.
    expect(planShards(input(leases, { members: ["a", "b"] })).take).toEqual([4]);
    expect(planShards(input(leases, { serverId: "b", members: ["a", "b"], led: leases.map((l) => l.holder === "b") })).take).toEqual([4]);
  });

  it("balance moves shards to a joiner only once it is ready, one at a time, and never back (no bounce)", () => {
    const leases = [0, 1, 2, 3, 4, 5].map((s) => (s < 3 ? row(s, "a") : row(s, "b")));
    // c still joining: a and b are at their share of 3; nothing moves.
    expect(planShards(input(leases, { members: ["a", "b", "c"], joining: ["c"] })).release).toBeNull();
    // c ready and leading nothing: a (share 2) gives up one shard, its last.
    const ready = planShards(input(leases, { members: ["a", "b", "c"] }));
    expect(ready).toMatchObject({ release: 2, share: 2, take: [] });
    // After the release a is at its share: it neither takes the shard back nor gives up another.
    const after = leases.map((l) => (l.shard === 2 ? row(2, null) : l));
    const aAfter = planShards(input(after, { members: ["a", "b", "c"] }));
    expect(aAfter).toMatchObject({ take: [], release: null });
    // c, below its share, takes it.
    expect(planShards(input(after, { serverId: "c", members: ["a", "b", "c"], led: after.map(() => false) })).take).toEqual([2]);
  });

  it("a row of this server id but another incarnation is another process's: taken only once expired and unchanged for a lease", () => {
    const theirs = (shard: number, opts: Partial<ShardLease> = {}) => row(shard, "a", { incarnation: "a-predecessor", ...opts });
    const leases = [theirs(0, { expired: true }), theirs(1)];
    const led = [false, false];
    expect(planShards(input(leases, { members: ["a"], led, seen: leases.map((l) => ({ version: l.version, at: 800 })) })).take).toEqual([]);
    expect(planShards(input(leases, { members: ["a"], led, seen: leases.map((l) => ({ version: l.version, at: 0 })) })).take).toEqual([0]);
    // Its own row (same incarnation) that it does not lead in memory is an orphan, never taken again.
    const own = [row(0, "a", { expired: true })];
    expect(planShards(input(own, { members: ["a"], led: [false], seen: [{ version: 10, at: 0 }] })).take).toEqual([]);
  });
});

describe("observeRows", () => {
  it("answers as orphans only the rows this process acquired (its server id and incarnation) under an epoch it does not lead", () => {
    const leases = [row(0, "a"), row(1, "a", { incarnation: "a-other-process" }), row(2, "b"), row(3, "a", { epoch: 4 })];
    const seen: (Seen | null)[] = [null, null, null, null];
    const orphans = observeRows(seen, leases, 5, { serverId: "a", incarnation: "a-incarnation" }, [undefined, undefined, undefined, 4]);
    // Row 1 names this server id but another live process with it: releasing it would end that
    // process's term under it while it still serves (issue 20's duplicate --server-id).
    expect(orphans).toEqual([{ shard: 0, epoch: 1 }]);
    expect(seen).toEqual(leases.map((l) => ({ version: l.version, at: 5 })));
  });

  it("leaves a row it lost that names an in-sync standby to that standby (it takes the shard over with the table), rather than releasing it empty", () => {
    // Row 0: a term of this process whose gate closed (its renewals stalled); its standby b is in sync.
    const leases = [row(0, "a", { standbyId: "b", standbyIncarnation: "b-incarnation", inSync: true }), row(1, "a", { standbyId: "b", standbyIncarnation: "b-incarnation", inSync: false })];
    const self = { serverId: "a", incarnation: "a-incarnation" };
    expect(observeRows([null, null], leases, 5, self, [undefined, undefined])).toEqual([{ shard: 1, epoch: 1 }]);
    // Negative control (release-synced-orphan): released, table and all.
    expect(observeRows([null, null], leases, 5, self, [undefined, undefined], false)).toEqual([
      { shard: 0, epoch: 1 },
      { shard: 1, epoch: 1 },
    ]);
  });
});
