import type { Logger } from "pino";
import type { Coordinator, HandedOverTerm } from "../coordinator.js";
import type { ShardTerm } from "../shard-term.js";
import { awaitHandOverAck, pauseBeforeMove } from "./hand-over.js";
import { snapshotShard } from "./replicated-tables.js";
import type { ShardReplication, StandbyTarget } from "./shard-replication.js";

/** What {@link balanceHandOver} needs. */
export interface BalanceHandOverContext {
  readonly coordinator: Pick<Coordinator, "handOver">;
  readonly serverId: string;
  readonly incarnation: string;
  /** Bounds the wait for the taker's acknowledgement, and is the taker's first expiry. */
  readonly leaderLeaseMs: number;
  readonly logger: Logger;
  /** TEST ONLY: ms to wait between the acknowledgement and the row move. Default 0. */
  readonly pauseMs?: number | undefined;
  /** TEST ONLY (`hand-over-stale-ack`): see `HandOverAckContext.staleAck`. Default false. */
  readonly staleAck?: boolean | undefined;
  /**
   * The row move names this leader as the new epoch's in-sync standby, and the outcome carries the
   * table (`former`) for it to keep as its replica of that epoch: a taker that acknowledged but
   * never adopts (cut off from the database) leaves the shard to this member with every lock, not
   * to an empty takeover. Default true; false only under the test break `handed-over-without-former`.
   */
  readonly formerAsStandby?: boolean | undefined;
  /**
   * TEST ONLY (`end-on-unknown-hand-over`): a row move whose outcome is unknown ends the term at
   * once, as before the fence ({@link fenceUnknownMove}): when the row did not move and the taker
   * is no longer its in-sync standby, the member's next pass releases it as an orphan, table and
   * all. Default false.
   */
  readonly endOnUnknown?: boolean | undefined;
  /**
   * TEST ONLY (`hand-over-unfenced-round`): the row move is sent without its round, so the write
   * that is to fence it does not, and a move whose outcome was unknown may still commit once the
   * term serves again. Default false.
   */
  readonly unfencedRound?: boolean | undefined;
}

/** The table a balance hand-over's former leader keeps, as a replica of the new epoch (see {@link BalanceHandOverContext.formerAsStandby}). */
export interface FormerTable {
  /** The shard's snapshot, taken once the taker acknowledged (the table is frozen from then on). */
  readonly snapshot: unknown;
}

/**
 * How a balance hand-over ended:
 * - `moved`: the row names the taker (its new epoch in `moved`); the caller ends the term.
 * - `kept`: it did not move and the term serves again (its gate reopened): nothing was lost, a
 *   later pass tries again. `why` says what failed.
 * - `unknown`: the row-move statement failed and the term ended before a later write fenced it
 *   ({@link fenceUnknownMove}), so whether it moved is not known: the term must not serve again
 *   and must not be released either (the row may name this member the new epoch's in-sync
 *   standby: the caller keeps the table for that). The caller ends the term. A move whose outcome
 *   was unknown but which a later write fenced is `kept`: the row did not move and never will.
 * - `ended`: the term ended meanwhile on its own (its gate closed by time, a renewal matched nothing).
 * - `no-ack`: TEST ONLY (`balance-abandon-release`): the taker did not acknowledge; the caller
 *   releases the shard, table and all, as before issue 29.
 */
export type BalanceHandOverOutcome =
  | { readonly kind: "moved"; readonly moved: HandedOverTerm; readonly locks: number; readonly waiters: number; readonly former: FormerTable | null }
  | { readonly kind: "kept"; readonly why: string }
  | { readonly kind: "unknown"; readonly former: FormerTable | null }
  | { readonly kind: "ended" }
  | { readonly kind: "no-ack" };

/**
 * Hand `term` to `taker`, its in-sync standby, for balance (DESIGN.md "Hand-over with state": a
 * balance move never releases a shard). The term's gate is shut, reversibly
 * (`ShardTerm.pauseForHandOver`: nothing served, granted, timed out or lapsed; renewals go on, so
 * the row stays its own); the hand-over entry is appended and its acknowledgement awaited (a fresh
 * round trip, never an earlier cumulative acknowledgement); only then is the row moved, in one
 * statement fenced by the epoch and by the taker being the row's in-sync standby. When the
 * acknowledgement does not come, or the statement matched nothing (the row is still this term's:
 * only its holder moves a row that has not expired), the gate reopens and the term serves on with
 * its table. Once the row moved, the row names this leader the new epoch's in-sync standby, also
 * after the taker adopts (its replication resumes to this member: `ShardReplication.resume`; the
 * taker later moves its standby to where standbys spread, never unprotected:
 * `ShardReplication.moveStandby`), and
 * the outcome carries the table for this member's replica store: a taker that never adopts, or
 * fails right after adopting, leaves the shard to its former leader's takeover with state.
 * `abandonRelease` (TEST ONLY, `balance-abandon-release`) answers `no-ack` instead of reopening.
 */
export async function balanceHandOver(term: ShardTerm, taker: StandbyTarget, context: BalanceHandOverContext, abandonRelease = false): Promise<BalanceHandOverOutcome> {
  const { coordinator, serverId, incarnation, leaderLeaseMs, logger } = context;
  const where = { shard: term.shard, epoch: term.epoch, leaderId: term.leaderId, reason: "balance", taker: taker.serverId };
  const replication = term.replicator?.replication;
  if (replication === undefined || term.isEnded) return { kind: "kept", why: "not replicated" };
  // A standby move in flight is settled first: the row then names one standby for sure.
  await replication.settleMove();
  const named = replication.standby;
  if (term.isEnded) return { kind: "ended" };
  if (named === null || named.serverId !== taker.serverId || named.incarnation !== taker.incarnation || replication.rule.state !== "in-sync") return { kind: "kept", why: "the taker is no longer the in-sync standby" };
  const table = term.pauseForHandOver();
  const keep = (why: string): BalanceHandOverOutcome => {
    if (term.isEnded) return { kind: "ended" };
    term.resumeAfterHandOver();
    logger.warn({ ...where, why }, "hand-over abandoned: keeping the shard with its table (its gate reopened); balance tries again later");
    return { kind: "kept", why };
  };
  const outcome = await awaitHandOverAck(replication, { leaderLeaseMs, logger, where, staleAck: context.staleAck, heldBack: term.heldBackPlaces() });
  if (term.isEnded) return { kind: "ended" };
  if (outcome !== "acked") {
    if (abandonRelease) return { kind: "no-ack" };
    return keep(`the taker did not acknowledge the hand-over entry (${outcome})`);
  }
  // The gate has been shut since before the acknowledged entry: this is the very table the taker holds.
  const former = context.formerAsStandby === false ? null : formerTable(term, logger, where);
  const formerAsStandby = former !== null;
  await pauseBeforeMove(replication, context.pauseMs);
  let moved: HandedOverTerm | null;
  // The move's round: a later write of this term's rounds that matched fences it (sync-rounds.ts).
  const round = replication.rounds.take();
  try {
    moved = await coordinator.handOver({ shard: term.shard, epoch: term.epoch, serverId, incarnation }, taker, leaderLeaseMs, formerAsStandby, context.unfencedRound === true ? undefined : round);
  } catch (err) {
    if (context.endOnUnknown === true || term.isEnded) {
      logger.warn({ ...where, err }, "the hand-over statement failed, its outcome unknown: the term ends without releasing the shard");
      return { kind: "unknown", former };
    }
    logger.warn({ ...where, err }, "the hand-over statement failed, its outcome unknown: fencing it before deciding");
    if ((await fenceUnknownMove(term, replication, round, leaderLeaseMs)) === "unmoved") return keep("the hand-over statement's outcome was unknown, and a later write showed the row unmoved and fenced the statement");
    logger.warn(where, "the term ended before the hand-over statement was fenced: ending without releasing the shard (the row may have moved, naming this member the new epoch's in-sync standby)");
    return { kind: "unknown", former };
  }
  if (moved === null) {
    logger.warn({ ...where }, "hand-over matched nothing (the row is no longer this term's, or the taker not its in-sync standby)");
    return keep("the hand-over statement matched nothing");
  }
  logger.info({ ...where, standby: taker.serverId, newEpoch: moved.epoch, entries: replication.log.lastSeq, locksCarried: table.locks, waitersCarried: table.waiters }, "shard handed over");
  return { kind: "moved", moved, locks: table.locks, waiters: table.waiters, former };
}

/**
 * After a row move sent under `round` whose outcome is unknown: wait until a write of a later round
 * of the term's rounds matched, restating the row's sync state whenever nothing else is in flight
 * (`ShardReplication.restateSync`), every twentieth of a leader lease. That write found the row
 * still this term's, so the move had not committed, and it fences the move for good
 * (`Coordinator.handOver`'s `round`): `"unmoved"`, and the term may serve on with its table.
 * Ending the term instead would leave the row naming this member at its epoch with a taker that
 * may no longer be its in-sync standby: the member's next pass releases it as an orphan, table and
 * all (found by `pnpm sim`, seeds 91820 and 96068, the taker stopped or cut off meanwhile).
 * `"ended"` when the term ended first (a renewal matched nothing: the row may have moved).
 */
async function fenceUnknownMove(term: ShardTerm, replication: ShardReplication, round: number, leaderLeaseMs: number): Promise<"unmoved" | "ended"> {
  const retryMs = Math.max(5, Math.floor(leaderLeaseMs / 20));
  for (;;) {
    if (term.isEnded) return "ended";
    if (replication.rounds.matchedRound > round) return "unmoved";
    await replication.restateSync().catch(() => false);
    if (term.isEnded) return "ended";
    if (replication.rounds.matchedRound > round) return "unmoved";
    await new Promise<void>((resolve) => replication.clock.setTimer(resolve, retryMs));
  }
}

/** The frozen table of `term` to keep as the former leader's replica, or `null` when it cannot be exported (the term ended meanwhile: no table to keep). */
function formerTable(term: ShardTerm, logger: Logger, where: Readonly<Record<string, unknown>>): FormerTable | null {
  try {
    return { snapshot: snapshotShard(term.service) };
  } catch (err) {
    logger.warn({ ...where, err }, "the table handed over could not be exported: the row moves without naming this leader its standby");
    return null;
  }
}
