import { describe, expect, it } from "vitest";
import type { ShardLease } from "../../src/cluster/coordinator.js";
import { nextPassDelay, planShards, type Seen } from "../../src/cluster/plan-shards.js";

/**
 * `pnpm sim` seeds 18293, 21643, 63666, 65771, 69453 and 73112: a shard's leader failed (paused,
 * crashed, cut from its database) with s1 its in-sync standby. Every member takes such a row once
 * expired and seen unchanged for a leader lease, but the others leave it to the standby for one
 * more: the standby's window is under a leader lease (the others may have seen the row's last
 * version up to a pass earlier than it did). Its read of the rows in the window lost its answer (a
 * statement timeout, a third of a leader lease), its next pass came a whole third of a lease after
 * that timeout, and that read lost its answer too: the window was over, another member took the
 * shard empty, and a transaction's immutable-timestamp lock its holder refreshed in time was lost.
 */

const LEADER_LEASE_MS = 1_000;
const CADENCE_MS = LEADER_LEASE_MS / 3;
/** The statement timeout of the read of the rows (create-cluster-service.ts: a third of the leader lease). */
const TIMEOUT_MS = CADENCE_MS;
/** How long an answered read of the rows takes. */
const READ_MS = 2;

/** The dead leader s0's row of its shard: its last renewal wrote version 17; s1 (incarnation s1-1) is its in-sync standby. */
function deadLeadersRow(expired: boolean): ShardLease {
  return {
    shard: 0,
    holder: "s0",
    url: "http://s0",
    leaderId: "L0",
    incarnation: "s0-1",
    epoch: 1,
    version: 17,
    expired,
    transitions: 1,
    standbyId: "s1",
    standbyIncarnation: "s1-1",
    inSync: true,
  };
}

interface Member {
  readonly serverId: string;
  /** When this member's pass first read version 17 (it passes every cadence from then on). */
  readonly seenAt: number;
  /** How many of its reads lose their answers, from its first pass that may take the row (a leader lease after it read it). */
  readonly lostReads: number;
}

/**
 * Run both members' leadership passes over the row (it expires at `expiresAt`, nobody renews it)
 * and answer who takes it first. A pass whose read loses its answer ends at its timeout; the next
 * is scheduled by {@link nextPassDelay}, told of the failed read unless `tellFailedRead` is false
 * (the test break `reread-after-cadence`).
 */
function firstTaker(members: readonly Member[], expiresAt: number, tellFailedRead: boolean): string | null {
  const next = members.map((m) => ({ member: m, at: m.seenAt, lost: 0 }));
  const seen: Seen = { version: 17, at: 0 };
  for (let step = 0; step < 100; step++) {
    next.sort((a, b) => a.at - b.at);
    const due = next[0]!;
    const { member } = due;
    const sentAt = due.at;
    const lost = sentAt - member.seenAt >= LEADER_LEASE_MS && due.lost < member.lostReads;
    let failedReadSentAt: number | null = null;
    let now = sentAt + READ_MS;
    if (lost) {
      due.lost++;
      now = sentAt + TIMEOUT_MS;
      failedReadSentAt = sentAt;
    } else {
      const plan = planShards({
        leases: [deadLeadersRow(sentAt >= expiresAt)],
        seen: [{ ...seen, at: member.seenAt }],
        now,
        leaderLeaseMs: LEADER_LEASE_MS,
        serverId: member.serverId,
        incarnation: `${member.serverId}-1`,
        members: ["s0", "s1", "s2"],
        led: [false],
      });
      if (plan.take.length > 0) return member.serverId;
    }
    const leases = [deadLeadersRow(now >= expiresAt)];
    due.at =
      now +
      nextPassDelay({
        leases,
        seen: [{ ...seen, at: member.seenAt }],
        now,
        leaderLeaseMs: LEADER_LEASE_MS,
        joinWaitEnds: null,
        own: () => false,
        failedReadSentAt: tellFailedRead ? failedReadSentAt : null,
      });
  }
  return null;
}

// Seed 73112's phases: s2 read version 17 first, s1 (the standby) 143 ms later; the row expired
// on the database clock 663 ms after s1 read it. s1's first pass that may take it (a leader lease
// after it read it) loses its read's answer, and so does the one after.
const members: readonly Member[] = [
  { serverId: "s2", seenAt: 0, lostReads: 0 },
  { serverId: "s1", seenAt: 143, lostReads: 2 },
];
const EXPIRES_AT = 806;

describe("a pass whose read of the rows failed is followed by the next a cadence after the read was sent", () => {
  it("the next pass after a read that timed out runs at once (the timeout already spent the cadence)", () => {
    const delay = nextPassDelay({ leases: [], seen: [], now: 5_000 + TIMEOUT_MS, leaderLeaseMs: LEADER_LEASE_MS, joinWaitEnds: null, own: () => false, failedReadSentAt: 5_000 });
    expect(delay).toBe(0);
  });

  it("a read that failed at once (the database refused the connection) waits out the cadence: no busy loop", () => {
    const delay = nextPassDelay({ leases: [], seen: [], now: 5_002, leaderLeaseMs: LEADER_LEASE_MS, joinWaitEnds: null, own: () => false, failedReadSentAt: 5_000 });
    expect(delay).toBe(Math.floor(CADENCE_MS) - 2);
  });

  it("an in-sync standby whose two reads in its window lose their answers still takes the dead leader's shard first (seed 73112)", () => {
    expect(firstTaker(members, EXPIRES_AT, true)).toBe("s1");
  });

  it("negative control: a whole cadence after each failed read, the other member takes the shard empty first", () => {
    expect(firstTaker(members, EXPIRES_AT, false)).toBe("s2");
  });
});
