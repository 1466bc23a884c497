import { describe, expect, it } from "vitest";
import { standbyToMoveTo } from "../../../src/cluster/replication/choose-standbys.js";
import { settle } from "./fake-replication-clock.js";
import { LATE_MS, setup, Standby } from "./shard-replication-fixture.js";

/**
 * `ShardReplication.moveStandby` step by step, on a fake clock: the row names the former leader
 * ("standby", kept by the adoption) in sync and the replication resumed to it; the move goes to
 * `p`. Whatever happens, nothing is answered that the standby the row names in sync lacks.
 */
function resumed(unknownMoveAsFailed = false) {
  const p = new Standby("p-1", "p");
  const s = setup([p], { unknownMoveAsFailed });
  s.coordinator.row = { ...s.coordinator.row, standby: { serverId: "standby", incarnation: "standby-1" }, inSync: true, round: 0 };
  s.replication.resume(s.standby().target);
  return { ...s, p };
}

async function inSync(s: ReturnType<typeof resumed>): Promise<void> {
  await s.clock.endTurn();
  await s.clock.advance(1);
  expect(s.replication.rule.state).toBe("in-sync");
}

/** Grant `what` and record when (and how) it was answered. */
function answered(s: ReturnType<typeof resumed>, what: string): string[] {
  const seen: string[] = [];
  void s.replication.whenAcked(s.grant(what)).then((outcome) => seen.push(`${outcome} in_sync=${String(s.coordinator.row.inSync)} standby=${s.coordinator.row.standby?.serverId}`));
  return seen;
}

describe("ShardReplication.moveStandby", () => {
  it("a new standby that does not keep up is given up before the row names it: the kept one stays named in sync, nothing recorded not in sync", async () => {
    const s = resumed();
    await inSync(s);
    s.p.paused = true;
    const outcome = s.replication.moveStandby(s.p.target);
    const seen = answered(s, "g1");
    await s.clock.endTurn();
    // Given up at half the lateness bound, before the rule's own watchdog (the whole bound).
    await s.clock.advance(LATE_MS);
    expect(await outcome).toBe("kept");
    expect(seen).toEqual(["acked in_sync=true standby=standby"]);
    expect(s.coordinator.writes).toEqual(["in_sync=true"]);
    expect(s.replication.rule.state).toBe("in-sync");
    expect(s.replication.moving).toBe(false);
  });

  it("while the row update is in doubt a grant waits for both standbys; once it matched, for the new one only", async () => {
    const s = resumed();
    await inSync(s);
    s.coordinator.holdMoves = true;
    const outcome = s.replication.moveStandby(s.p.target);
    await s.clock.endTurn();
    await settle();
    expect(s.coordinator.writes.at(-1)).toBe("move standby-1->p-1");
    s.standby().paused = true;
    const seen = answered(s, "g1");
    await s.clock.endTurn();
    await s.clock.advance(LATE_MS / 2);
    // The kept standby is paused: not answered on the new one's acknowledgement alone.
    expect(seen).toEqual([]);
    s.coordinator.heldMoves.shift()!(true, "answer");
    await settle();
    expect(await outcome).toBe("moved");
    expect(seen).toEqual(["acked in_sync=true standby=p"]);
    expect(s.p.items()).toContain("g1");
    expect(s.replication.standby?.serverId).toBe("p");
    expect(s.coordinator.writes.filter((w) => w === "in_sync=false")).toEqual([]);
  });

  it("a standby late while the row update is in doubt: in_sync = false is recorded (after every move statement sent) before the grant is answered, and the move is not sent again", async () => {
    const s = resumed();
    await inSync(s);
    s.coordinator.holdMoves = true;
    const outcome = s.replication.moveStandby(s.p.target);
    await s.clock.endTurn();
    await settle();
    s.p.paused = true;
    const seen = answered(s, "g1");
    await s.clock.endTurn();
    await s.clock.advance(LATE_MS);
    await settle();
    expect(seen).toEqual(["unreplicated in_sync=false standby=standby"]);
    // The statement held commits now, late: its round is below the not-in-sync write's, so it matches nothing.
    s.coordinator.heldMoves.shift()!(true, "unknown");
    expect(await outcome).toBe("kept");
    await s.clock.advance(LATE_MS);
    expect(s.coordinator.row.inSync).toBe(false);
    expect(s.coordinator.writes.filter((w) => w.startsWith("move"))).toHaveLength(1);
    expect(s.replication.rule.state).toBe("out");
  });
});

/** The row update commits but its answer is lost; then a grant: answered only once the standby the row names holds it? */
async function unknownOutcomeThenGrant(unknownMoveAsFailed: boolean) {
  const s = resumed(unknownMoveAsFailed);
  await inSync(s);
  s.coordinator.holdMoves = true;
  const outcome = s.replication.moveStandby(s.p.target);
  await s.clock.endTurn();
  await settle();
  s.coordinator.heldMoves.shift()!(true, "unknown");
  await settle();
  expect(s.coordinator.row.standby?.serverId).toBe("p");
  s.coordinator.holdMoves = false;
  const seen = answered(s, "g1");
  await s.clock.endTurn();
  await s.clock.advance(LATE_MS / 10);
  await settle();
  return { s, seen, outcome: await outcome };
}

describe("ShardReplication.moveStandby: the row update's outcome unknown", () => {
  it("is sent again while both standbys are waited on: the standby the row names (p) holds every grant answered", async () => {
    const { s, seen, outcome } = await unknownOutcomeThenGrant(false);
    expect(outcome).toBe("moved");
    expect(seen).toEqual(["acked in_sync=true standby=p"]);
    expect(s.p.items()).toContain("g1");
  });

  it("negative control (move-unknown-as-failed): given up as if not committed, a grant is answered that p, named in sync, lacks", async () => {
    const { s, seen, outcome } = await unknownOutcomeThenGrant(true);
    expect(outcome).toBe("kept");
    expect(seen).toEqual(["acked in_sync=true standby=p"]);
    expect(s.p.items()).not.toContain("g1");
  });
});

describe("standbyToMoveTo: where a kept standby moves so standbys spread", () => {
  const members = ["a", "b", "c"].map((id) => ({ serverId: id, ready: true }));
  const rows = (standbys: Record<number, string>) => [0, 1, 2, 3].map((shard) => ({ shard, standbyId: standbys[shard] ?? null }));
  it("moves to a member standby of fewer other shards than the kept one", () => {
    expect(standbyToMoveTo({ leader: "b", members, leases: rows({ 1: "a", 2: "a" }), shard: 1, current: "a" })).toBe("c");
  });
  it("keeps it when no member is standby of fewer (a move would not spread them better)", () => {
    expect(standbyToMoveTo({ leader: "b", members, leases: rows({ 1: "a", 2: "c" }), shard: 1, current: "a" })).toBeNull();
    expect(standbyToMoveTo({ leader: "b", members: members.slice(0, 2), leases: rows({ 1: "a" }), shard: 1, current: "a" })).toBeNull();
  });
});
