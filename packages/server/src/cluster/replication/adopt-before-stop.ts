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
  /** How long to wait at most for adoptions already in flight (a leader lease). */
  readonly deadlineMs: number;
}

/**
 * Before a member stops, adopt every row handed over to it that it does not lead yet (its NOTIFY
 * was lost and no pass has run since, or an adoption is still in flight), so that the stop hands
 * each on with its table like any other led shard. Otherwise the row, which names this process,
 * expires once it exits and is taken empty, with every lock the former leader handed over (found
 * by `pnpm sim`, seed 684: a rolling restart stopped a member 270 ms after a shard was handed to
 * it). Answers once every such adoption settled, or the deadline passed; never rejects.
 */
export async function adoptBeforeStop(host: AdoptBeforeStopHost): Promise<void> {
  let rows: readonly ShardLease[];
  try {
    rows = await host.readLeases();
  } catch {
    return;
  }
  const handed = rows.filter((r) => !r.expired && r.holder === host.serverId && r.incarnation === host.incarnation && host.ledEpoch(r.shard) !== r.epoch);
  const until = host.now() + host.deadlineMs;
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
