import { realProcessClock } from "../process-clock.js";
import type { ReplicationClock } from "./replication-clock.js";
import type { ShardReplication, StandbyTarget } from "./shard-replication.js";

/** What {@link syncStandby} is given. */
export interface SyncStandbyOptions {
  /**
   * The member that must become the in-sync standby (a balance move's taker: a standby in sync
   * on another member is moved to it, one joining there is dropped for it), or `null`: any
   * in-sync standby will do (a stop).
   */
  readonly taker: StandbyTarget | null;
  /**
   * With `taker: null`, the member to name when none is joining or in sync (a ready live member
   * other than this one), `null` when there is none now. Called at most every `retryMs`.
   */
  readonly choose: () => Promise<StandbyTarget | null>;
  /** How long to try, from the call: a stop or a balance move must not wait on a standby for ever. */
  readonly deadlineMs: number;
  /** How often the rule's state is looked at (it changes on acknowledgements and row writes). */
  readonly pollMs: number;
  /** Pause between two attempts to name a standby (each costs a statement and a snapshot). */
  readonly retryMs: number;
  /** False once the term no longer serves (it was lost, or the caller gave up): stop trying. */
  readonly alive: () => boolean;
  /** The process's clock and timers (the replication's). Default: Node's ({@link realProcessClock}). */
  readonly clock?: Pick<ReplicationClock, "now" | "setTimer"> | undefined;
  /**
   * TEST ONLY (`LEASEHOLD_TEST_BREAK=balance-sync-unprotected`): a standby in sync on another member
   * than the taker is recorded not in sync first, and only then is the taker named and synced,
   * instead of moving the standby to the taker (`ShardReplication.moveStandby`). Default false.
   */
  readonly unprotectedTakerSync?: boolean | undefined;
}

const same = (a: StandbyTarget, b: StandbyTarget): boolean => a.serverId === b.serverId && a.incarnation === b.incarnation;

/**
 * Get the shard an in-sync standby before handing it over with its table (DESIGN.md "Hand-over
 * with state": "a shard without an in-sync standby first gets one, within a deadline"): while the
 * term keeps serving, name a member standby (one fenced write), let it take a snapshot and follow
 * the log until the rule records `in_sync = true`, then answer that standby. Answers `null` when no
 * standby came in sync by the deadline, or the term stopped serving, or its leader was deposed:
 * the caller then releases the shard as without a standby.
 */
export async function syncStandby(replication: ShardReplication, options: SyncStandbyOptions): Promise<StandbyTarget | null> {
  const time = options.clock ?? realProcessClock;
  const clock = (): number => time.now();
  const until = clock() + options.deadlineMs;
  let nextTry = -Infinity;
  while (options.alive() && clock() < until) {
    const state = replication.rule.state;
    const standby = replication.standby;
    if (state === "fenced") return null;
    const wanted = standby !== null && (options.taker === null || same(standby, options.taker));
    if (state === "in-sync" && wanted) return standby;
    if (state === "out" && clock() >= nextTry) {
      nextTry = clock() + options.retryMs;
      const target = options.taker ?? (await options.choose().catch(() => null));
      if (target !== null && options.alive()) await replication.attach(target);
      continue;
    }
    if (state === "in-sync" && !wanted && options.taker !== null && options.unprotectedTakerSync !== true) {
      // In sync on another member than the taker: move the standby to the taker, the current one
      // named in sync until the taker holds the snapshot (seed 26958: recording it not in sync
      // first left the shard unprotected during the taker's join, and a crash of this leader then
      // left it to be taken empty). A move given up ("kept") is tried again after the retry pause.
      if (!replication.moving && clock() >= nextTry) {
        nextTry = clock() + options.retryMs;
        void replication.moveStandby(options.taker).catch(() => "kept");
      }
    } else if ((state === "joining" || state === "in-sync") && !wanted) {
      // Joining on another member than the taker (nothing in sync to keep), or TEST ONLY
      // (balance-sync-unprotected) in sync there: record it not in sync, then name the taker (at
      // once: the drop is not an attempt). Nothing happens while the record is being written.
      replication.dropStandby();
    }
    await new Promise<void>((resolve) => time.setTimer(resolve, options.pollMs));
  }
  return null;
}
