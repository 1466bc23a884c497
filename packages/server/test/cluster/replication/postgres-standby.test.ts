import { describe, expect, it } from "vitest";
import type { Coordinator, LeaseClaim, LeaderTerm } from "../../../src/cluster/coordinator.js";
import { createPostgresCoordinator } from "../../../src/cluster/postgres/postgres-coordinator.js";
import { claim, member } from "../claims.js";
import { schemaPerTest } from "../pg-schema.js";

describe("PostgresCoordinator: standbys, in_sync and the hand-over", () => {
  const bed = schemaPerTest<Coordinator>();
  const coordinator = (): Coordinator => {
    const c = createPostgresCoordinator({ connectionString: bed.schema.connectionString });
    bed.open.push(c);
    return c;
  };
  type Row = { holder: string | null; incarnation: string | null; epoch: string; leader_id: string | null; standby_id: string | null; standby_incarnation: string | null; in_sync: boolean; version: string; url: string | null };
  const row = async (shard = 0): Promise<Row> =>
    (await bed.schema.query<Row>("SELECT holder, incarnation, epoch, leader_id, standby_id, standby_incarnation, in_sync, version, url FROM leases WHERE shard = $1", [shard]))[0]!;

  /** Leader "a" holds shard 0 (epoch 1) with a lease of `leaseMs`; "b" is a live member. */
  async function led(leaseMs = 60_000): Promise<{ c: Coordinator; term: LeaderTerm }> {
    const c = coordinator();
    await c.start(2);
    const acquired = (await c.acquire(0, 0, claim("a", leaseMs)))!;
    await c.heartbeat({ serverId: "b", incarnation: "b-inc", url: "http://b.invalid:8080", ready: true }, 60_000);
    return { c, term: { shard: 0, epoch: acquired.epoch, serverId: "a", incarnation: "a-inc" } };
  }

  /** Shard 0 taken from "a" by "x" after a's lease ran out: a is deposed. */
  async function depose(c: Coordinator): Promise<void> {
    await new Promise((r) => setTimeout(r, 150));
    const seen = (await c.readLeases())[0]!;
    expect(await c.acquire(0, seen.version, claim("x"))).not.toBeNull();
  }

  it("creates a 256-bit cluster key with the schema, the same for every member, kept across restarts", async () => {
    const a = coordinator();
    await a.start(2);
    const key = await a.readClusterKey();
    expect(key.length).toBe(32);
    const b = coordinator();
    await b.start(2);
    expect((await b.readClusterKey()).equals(key)).toBe(true);
    const grants = await bed.schema.query<{ grantee: string }>("SELECT grantee FROM information_schema.role_table_grants WHERE table_schema = $1 AND table_name = 'cluster_key'", [bed.schema.name]);
    expect(grants.map((g) => g.grantee)).not.toContain("PUBLIC");
  });

  it("names a standby and records in_sync, fenced by epoch and incarnation; the rounds keep the leader's order", async () => {
    const { c, term } = await led();
    expect(await c.nameStandby(term, member("b"), 1)).toBe(true);
    expect(await row()).toMatchObject({ standby_id: "b", standby_incarnation: "b-inc", in_sync: false });
    // in_sync = true only for the standby incarnation the row names.
    expect(await c.setInSync(term, "b-other", true, 2)).toBe(false);
    expect(await c.setInSync(term, "b-inc", true, 3)).toBe(true);
    expect((await c.readLeases())[0]).toMatchObject({ standbyId: "b", standbyIncarnation: "b-inc", inSync: true });
    expect(await c.setInSync(term, "b-inc", false, 4)).toBe(true);
    // An earlier round landing late (its answer was lost) changes nothing.
    expect(await c.setInSync(term, "b-inc", true, 3)).toBe(false);
    expect((await row()).in_sync).toBe(false);
    // Another process with the leader's server id (a restart) is not the leader.
    expect(await c.setInSync({ ...term, incarnation: "a-restarted" }, "b-inc", true, 9)).toBe(false);
    expect((await row()).in_sync).toBe(false);
  });

  it("a deposed leader's standby and in_sync writes change nothing", async () => {
    const { c, term } = await led(100);
    expect(await c.nameStandby(term, member("b"), 1)).toBe(true);
    await depose(c);
    expect(await row()).toMatchObject({ holder: "x", epoch: "2", standby_id: null, in_sync: false });
    // The new leader names the same standby: only the epoch (and incarnation) tell the terms apart.
    const x = { shard: 0, epoch: 2, serverId: "x", incarnation: "x-inc" };
    expect(await c.nameStandby(x, member("b"), 1)).toBe(true);
    const before = await row();
    // High rounds, so that only the term's fence can refuse them.
    expect(await c.nameStandby(term, member("b"), 100)).toBe(false);
    expect(await c.setInSync(term, "b-inc", true, 101)).toBe(false);
    expect(await row()).toEqual(before);
    expect(await c.setInSync(x, "b-inc", true, 2)).toBe(true);
    const inSync = await row();
    expect(await c.setInSync(term, "b-inc", false, 102)).toBe(false);
    expect(await row()).toEqual(inSync);
  });

  it("hands the shard to its in-sync standby in one statement: holder, url, incarnation, epoch + 1, leader_id kept, and notifies", async () => {
    const { c, term } = await led();
    const watcher = coordinator();
    const heard = new Promise<number>((resolve) => void watcher.watch(resolve, () => undefined));
    await new Promise((r) => setTimeout(r, 50));
    expect(await c.nameStandby(term, member("b"), 1)).toBe(true);
    // Not in sync yet: no hand-over.
    expect(await c.handOver(term, member("b"), 60_000)).toBeNull();
    expect(await c.setInSync(term, "b-inc", true, 2)).toBe(true);
    // Not to another incarnation of the standby (a restarted one holds nothing).
    expect(await c.handOver(term, member("b", "b-restarted"), 60_000)).toBeNull();
    const before = await row();
    const moved = await c.handOver(term, member("b"), 60_000);
    expect(moved).toEqual({ shard: 0, epoch: 2, url: "http://b.invalid:8080" });
    expect(await heard).toBe(0);
    const after = await row();
    expect(after).toMatchObject({ holder: "b", incarnation: "b-inc", epoch: "2", leader_id: "a-term", url: "http://b.invalid:8080", standby_id: null, standby_incarnation: null, in_sync: false });
    expect(Number(after.version)).toBeGreaterThan(Number(before.version));
    expect((await c.readLeases())[0]!.expired).toBe(false);
    // The old leader's term is over: a second hand-over, or any standby write, matches nothing.
    expect(await c.handOver(term, member("b"), 60_000)).toBeNull();
    expect(await c.nameStandby(term, member("b"), 5)).toBe(false);
    // The new leader writes its own standby state (its rounds start again with its term).
    expect(await c.nameStandby({ shard: 0, epoch: 2, serverId: "b", incarnation: "b-inc" }, member("a"), 1)).toBe(true);
  });

  it("a standby takes an expired row with its table only while the row names it in sync under the same leader_id, which it keeps", async () => {
    const { c, term } = await led(100);
    expect(await c.nameStandby(term, member("b"), 1)).toBe(true);
    const withState = (over: Partial<LeaseClaim> = {}): LeaseClaim => ({ ...claim("b"), leaderId: "a-term", withState: true, ...over });
    await new Promise((r) => setTimeout(r, 150));
    let seen = (await c.readLeases())[0]!;
    // Named but not in sync: refused.
    expect(await c.acquire(0, seen.version, withState())).toBeNull();
    // (The standby writes are fenced by the term, not by its expiry.)
    expect(await c.setInSync(term, "b-inc", true, 2)).toBe(true);
    seen = (await c.readLeases())[0]!;
    // Another incarnation of b, another member, or another leader_id: refused.
    expect(await c.acquire(0, seen.version, withState({ incarnation: "b-restarted" }))).toBeNull();
    expect(await c.acquire(0, seen.version, withState({ ...claim("x"), leaderId: "a-term", withState: true }))).toBeNull();
    expect(await c.acquire(0, seen.version, withState({ leaderId: "other-term" }))).toBeNull();
    const got = await c.acquire(0, seen.version, withState());
    expect(got).toMatchObject({ shard: 0, epoch: term.epoch + 1 });
    expect(await row()).toMatchObject({ holder: "b", incarnation: "b-inc", leader_id: "a-term", standby_id: null, in_sync: false });
  });

  it("the standby adopts a handed-over row in one fenced statement: fresh expiry, lease-wait recorded for its epoch", async () => {
    const { c, term } = await led();
    expect(await c.nameStandby(term, member("b"), 1)).toBe(true);
    expect(await c.setInSync(term, "b-inc", true, 2)).toBe(true);
    const moved = (await c.handOver(term, member("b"), 60_000))!;
    const adopt = (over: Partial<LeaseClaim> = {}) => c.adoptHandOver(0, moved.epoch, { ...claim("b", 5_000), leaderId: "a-term", validForMs: 900, ...over });
    // Not by another process, nor under another leader_id, nor for another epoch.
    expect(await adopt({ incarnation: "b-restarted" })).toBeNull();
    expect(await adopt({ leaderId: "b-term" })).toBeNull();
    expect(await c.adoptHandOver(0, moved.epoch + 1, { ...claim("b"), leaderId: "a-term" })).toBeNull();
    const before = await row();
    // A stop's hand-over named no former leader: the adopted row names no standby.
    expect(await adopt()).toEqual({ shard: 0, epoch: moved.epoch, lockDelayMs: 350, bounds: [], standby: null });
    const after = await bed.schema.query<{ valid_for_ms: number; valid_for_epoch: string; version: string; holder: string; leader_id: string }>(
      "SELECT valid_for_ms, valid_for_epoch, version, holder, leader_id FROM leases WHERE shard = 0",
    );
    // The record: a's validForMs (complete up to a's epoch) or b's own, whichever is longer, now complete up to b's.
    expect(after[0]).toMatchObject({ valid_for_ms: 900, valid_for_epoch: String(moved.epoch), holder: "b", leader_id: "a-term" });
    expect(Number(after[0]!.version)).toBeGreaterThan(Number(before.version));
  });

  it("a deposed leader's hand-over changes nothing", async () => {
    const { c, term } = await led(100);
    expect(await c.nameStandby(term, member("b"), 1)).toBe(true);
    expect(await c.setInSync(term, "b-inc", true, 2)).toBe(true);
    await depose(c);
    // The new leader has the same standby, in sync: only the epoch fence refuses the old leader.
    const x = { shard: 0, epoch: 2, serverId: "x", incarnation: "x-inc" };
    expect(await c.nameStandby(x, member("b"), 1)).toBe(true);
    expect(await c.setInSync(x, "b-inc", true, 2)).toBe(true);
    const before = await row();
    expect(await c.handOver(term, member("b"), 60_000)).toBeNull();
    expect(await row()).toEqual(before);
  });

  it("a hand-over sent under a sync round is fenced for good by a later round's write that matched (a balance move whose outcome was unknown, pnpm sim seeds 91820 and 96068)", async () => {
    const { c, term } = await led();
    expect(await c.nameStandby(term, member("b"), 1)).toBe(true);
    expect(await c.setInSync(term, "b-inc", true, 2)).toBe(true);
    // The move takes round 3; the leader then writes the same sync state under round 4.
    expect(await c.setInSync(term, "b-inc", true, 4)).toBe(true);
    const before = await row();
    expect(await c.handOver(term, member("b"), 60_000, true, 3)).toBeNull();
    expect(await row()).toEqual(before);
    // Under a round above the stored one, it moves.
    expect(await c.handOver(term, member("b"), 60_000, true, 5)).toEqual({ shard: 0, epoch: 2, url: "http://b.invalid:8080" });
  });

  it("every acquisition and release starts the term without a standby", async () => {
    const { c, term } = await led();
    await c.nameStandby(term, member("b"), 1);
    await c.setInSync(term, "b-inc", true, 2);
    await c.release("a", [term]);
    expect(await row()).toMatchObject({ standby_id: null, standby_incarnation: null, in_sync: false });
    const next = (await c.acquire(0, (await c.readLeases())[0]!.version, claim("a")))!;
    const t2 = { shard: 0, epoch: next.epoch, serverId: "a", incarnation: "a-inc" };
    // A new term's rounds start at 1 again.
    expect(await c.nameStandby(t2, member("b"), 1)).toBe(true);
  });
});
