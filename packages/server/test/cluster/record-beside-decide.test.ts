import { describe, expect, it } from "vitest";
import type { Coordinator, ImmutableRecord, ShardLease } from "../../src/cluster/coordinator.js";
import { planShards, type Seen } from "../../src/cluster/plan-shards.js";
import { recordBesideDecide, recordImmutables } from "../../src/cluster/record-immutables.js";
import type { ShardTerm } from "../../src/cluster/shard-term.js";

/**
 * `pnpm sim` seed 3599: s1 crashed; s0, shard 2's in-sync standby, had one leader lease before the
 * other members would take the row empty. Its first read of the rows lost its answer, and on the
 * next pass the statement recording its own terms' immutable timestamps lost its answer too: the
 * pass waited out that statement's timeout before it decided, and s2 took the shard empty first.
 */

const LEADER_LEASE_MS = 1_000;

/** Shard 2's row as the crashed leader s1 left it: expired, s0 (incarnation s0-1) its in-sync standby. */
const deadLeadersRow: ShardLease = {
  shard: 2,
  holder: "s1",
  url: "http://s1",
  leaderId: "L1",
  incarnation: "s1-1",
  epoch: 1,
  version: 7,
  expired: true,
  transitions: 1,
  standbyId: "s0",
  standbyIncarnation: "s0-1",
  inSync: true,
};

/** A term of s0's with an immutable timestamp to record. */
function termWithARecord(): ShardTerm {
  return {
    immutableRecords: (): ImmutableRecord[] => [{ namespace: "ns-a", term: { shard: 0, epoch: 1 }, immutable: 42 }],
    markRecorded: () => undefined,
  } as unknown as ShardTerm;
}

/** A coordinator whose record statement has not answered (its answer lost: the caller waits for its timeout). */
function unansweredRecord(): { coordinator: Coordinator; timeOut: () => void } {
  let timeOut: () => void = () => undefined;
  const pending = new Promise<never>((_resolve, reject) => {
    timeOut = () => reject(new Error("statement record-immutable timed out (outcome unknown)"));
  });
  return { coordinator: { recordImmutable: () => pending } as unknown as Coordinator, timeOut };
}

/** Let every settled promise's callbacks run. */
async function settle(): Promise<void> {
  for (let i = 0; i < 10; i++) await Promise.resolve();
}

/** s0's pass once it read the rows: the record of its own term, and the decision over shard 2's row. */
function standbysPass(coordinator: Coordinator): { record: () => Promise<void>; decide: () => Promise<void>; taken: number[] } {
  const taken: number[] = [];
  const seen: (Seen | null)[] = [null, null, { version: deadLeadersRow.version, at: 0 }];
  const record = (): Promise<void> => recordImmutables([termWithARecord(), null, null], coordinator).catch(() => undefined);
  const decide = (): Promise<void> => {
    const plan = planShards({
      leases: [{ ...deadLeadersRow, shard: 0, holder: "s0", incarnation: "s0-1", expired: false, standbyId: null, standbyIncarnation: null, inSync: false }, { ...deadLeadersRow, shard: 1, holder: "s2", incarnation: "s2-1", expired: false }, deadLeadersRow],
      seen,
      now: LEADER_LEASE_MS + 1,
      leaderLeaseMs: LEADER_LEASE_MS,
      serverId: "s0",
      incarnation: "s0-1",
      members: ["s0", "s1", "s2"],
      led: [true, false, false],
    });
    taken.push(...plan.take);
    return Promise.resolve();
  };
  return { record, decide, taken };
}

describe("a pass decides without waiting for its record of immutable timestamps", () => {
  it("an in-sync standby takes a dead leader's shard while the record statement has not answered", async () => {
    const { coordinator, timeOut } = unansweredRecord();
    const { record, decide, taken } = standbysPass(coordinator);
    let ended = false;
    const pass = recordBesideDecide(record, decide).then(() => (ended = true));
    await settle();
    expect(taken).toEqual([2]);
    // The pass itself ends once the record has (here: its timeout), so passes never overlap.
    expect(ended).toBe(false);
    timeOut();
    await pass;
    expect(ended).toBe(true);
  });

  it("the record starts first: it records the terms led when the rows were read", async () => {
    const order: string[] = [];
    await recordBesideDecide(
      () => (order.push("record"), Promise.resolve()),
      () => (order.push("decide"), Promise.resolve()),
    );
    expect(order).toEqual(["record", "decide"]);
  });

  it("negative control (immutables-before-decide): the standby decides nothing until the record times out", async () => {
    const { coordinator, timeOut } = unansweredRecord();
    const { record, decide, taken } = standbysPass(coordinator);
    const pass = recordBesideDecide(record, decide, true);
    await settle();
    expect(taken).toEqual([]);
    timeOut();
    await pass;
    expect(taken).toEqual([2]);
  });
});
