import type { ShardLease } from "../coordinator.js";
import type { PromotionCandidate } from "./promote-replica.js";

/** What {@link adoptBeforeStop} reads of, and asks of, a stopping member. */
export interface AdoptBeforeStopHost {
  readonly serverId: string;
  readonly incarnation: string;
  /** Read the lease rows (one statement); rejects when the database does not answer. */
  readonly readLeases: () => Promise<readonly ShardLease[]>;
  /** The epoch of the term this member leads of `shard`, `null` when none. */
  readonly ledEpoch: (shard: number) => number | null;
  /** The replica to adopt a row handed over to this member with, `null` when it holds none for it (the promoter's `forHandOver`). */
  readonly forHandOver: (row: ShardLease) => PromotionCandidate | null;
  /** True while a claim of `shard` with a replica is in flight (an adoption on a NOTIFY, or by a pass). */
  readonly busy: (shard: number) => boolean;
  /** The fenced adoption of `row` with `candidate`, and the start of its term. */
  readonly adopt: (row: ShardLease, candidate: PromotionCandidate) => Promise<void>;
  /** The member's clock and timers. */
  readonly now: () => number;
  readonly setTimer: (fn: () => void, ms: number) => unknown;
  /** How long to wait at most for adoptions already in flight, and for moves of acknowledged hand-overs (a leader lease). */
  readonly deadlineMs: number;
  /**
   * The shards whose replica here applied its leader's final hand-over entry and acknowledged it
   * (`ReplicaPromoter.awaitsHandOver`), that this member does not lead: their rows may move to it
   * any moment. Empty when none.
   */
  readonly awaitingHandOver: () => readonly number[];
  /** Time between reads of the rows while such a move is awaited (ms). */
  readonly intervalMs: number;
  /**
   * TEST ONLY (`stop-ignores-acked-hand-over`): read the rows once, as before seed 9029: a row
   * moved to this member after that read, for a hand-over entry it acknowledged, is left to expire.
   */
  readonly readOnce?: boolean | undefined;
}

/**
 * Before a member stops, adopt every row handed over to it that it does not lead yet (its NOTIFY
 * was lost and no pass has run since, or an adoption is still in flight), so that the stop hands
 * each on with its table like any other led shard. Otherwise the row, which names this process,
 * expires once it exits and is taken empty, with every lock the former leader handed over (found
 * by `pnpm sim`, seed 684: a rolling restart stopped a member 270 ms after a shard was handed to
 * it). A hand-over whose final entry this member acknowledged, and whose row has not moved to it
 * at the first read, is awaited too: the rows are read again every
 * {@link AdoptBeforeStopHost.intervalMs} until the row moved (and is adopted), the leader appended
 * again (it kept the shard), or the deadline passed (found by `pnpm sim`, seed 9029: the stop of a
 * balance move's taker read the rows just before the row moved to it, its replica having
 * acknowledged the hand-over entry, and exited without adopting it; its former leader, kept as its standby, was stopped
 * by the same rolling restart before the row expired, and the shard was taken empty). Answers
 * once every such adoption settled, or the deadline passed; never rejects.
 */
export async function adoptBeforeStop(host: AdoptBeforeStopHost): Promise<void> {
  const until = host.now() + host.deadlineMs;
  for (;;) {
    let rows: readonly ShardLease[] | null;
    try {
      rows = await host.readLeases();
    } catch {
      rows = null;
    }
    if (rows !== null) await adoptHanded(host, rows, until);
    if (host.readOnce === true || host.awaitingHandOver().length === 0 || host.now() >= until) return;
    await new Promise<void>((resolve) => host.setTimer(resolve, host.intervalMs));
  }
}

/** Adopt every row of `rows` handed over to this member that it does not lead yet. */
async function adoptHanded(host: AdoptBeforeStopHost, rows: readonly ShardLease[], until: number): Promise<void> {
  const handed = rows.filter((r) => !r.expired && r.holder === host.serverId && r.incarnation === host.incarnation && host.ledEpoch(r.shard) !== r.epoch);
  await Promise.all(
    handed.map(async (row) => {
      // One in flight already: wait for it (its term then starts before the stop looks at the terms).
      while (host.busy(row.shard) && host.now() < until) await new Promise<void>((resolve) => host.setTimer(resolve, 5));
      if (host.ledEpoch(row.shard) === row.epoch) return;
      const candidate = host.forHandOver(row);
      if (candidate !== null) await host.adopt(row, candidate).catch(() => undefined);
    }),
  );
}
