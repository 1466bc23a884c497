import { describe, expect, it } from "vitest";
import type { ShardLease } from "../../src/cluster/coordinator.js";
import { planShards, type PlanInput } from "../../src/cluster/plan-shards.js";

const row = (shard: number, holder: string | null, opts: Partial<ShardLease> = {}): ShardLease => ({
  shard,
  holder,
  url: holder === null ? null : `http://${holder}`,
  leaderId: holder === null ? null : `${holder}-${shard}`,
  epoch: 1,
  version: 10,
  expired: holder === null,
  transitions: 1,
  ...opts,
});

const input = (leases: ShardLease[], over: Partial<PlanInput> = {}): PlanInput => ({
  leases,
  seen: leases.map((l) => ({ version: l.version, at: 0 })),
  now: 1_000,
  leaderLeaseMs: 300,
  serverId: "a",
  members: ["a", "b"],
  led: leases.map((l) => l.holder === "a"),
  ...over,
});

describe("planShards", () => {
  it("takes released shards only up to its share (⌊S/n⌋, one more for the first S mod n members)", () => {
    const leases = [0, 1, 2, 3, 4].map((s) => row(s, null));
    expect(planShards(input(leases))).toMatchObject({ take: [0, 1, 2], share: 3, release: null });
    expect(planShards(input(leases, { serverId: "b", led: leases.map(() => false) }))).toMatchObject({ take: [0, 1], share: 2 });
  });

  it("takes an expired shard only after its row was seen unchanged for a whole leader lease, whatever the share", () => {
    const leases = [row(0, "a"), row(1, "a"), row(2, "b", { expired: true })];
    const members = ["a"];
    expect(planShards(input(leases, { members, seen: leases.map((l) => ({ version: l.version, at: 800 })) })).take).toEqual([]);
    expect(planShards(input(leases, { members, seen: leases.map((l) => ({ version: l.version, at: 700 })) })).take).toEqual([2]);
    // A live (unexpired) lease is never taken, however long it looked unchanged.
    const live = [row(0, "b"), row(1, "b")];
    expect(planShards(input(live, { members: ["a", "b"] })).take).toEqual([]);
    // Over its share, it still takes a dead leader's shard (availability first).
    const full = [row(0, "a"), row(1, "a"), row(2, "a"), row(3, "b", { expired: true })];
    expect(planShards(input(full, { members: ["a", "b"] })).take).toEqual([3]);
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
});
