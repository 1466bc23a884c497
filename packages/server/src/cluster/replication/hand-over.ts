import type { Logger } from "pino";
import { unavailable } from "../cluster-errors.js";
import type { HandOverReason } from "../cluster-metrics.js";
import type { Coordinator, HandedOverTerm, MemberIdentity } from "../coordinator.js";
import type { ShardTerm } from "../shard-term.js";
import type { HeldBackPlaces } from "../held-back-places.js";
import { handOverEntry } from "./replicated-tables.js";
import type { ShardReplication } from "./shard-replication.js";

/** What {@link handOverTerm} needs of the runtime. */
export interface HandOverContext {
  readonly coordinator: Pick<Coordinator, "handOver">;
  readonly serverId: string;
  readonly incarnation: string;
  /** Bounds the wait for the standby's acknowledgement, and is the new holder's first expiry. */
  readonly leaderLeaseMs: number;
  readonly logger: Logger;
  /** Why the shard is given up (its log lines say it). */
  readonly reason: HandOverReason;
  /** TEST ONLY: ms to wait between the final acknowledgement and the row move. Default 0. */
  readonly pauseMs?: number | undefined;
  /** TEST ONLY: see {@link HandOverAckContext.staleAck}. Default false. */
  readonly staleAck?: boolean | undefined;
  /**
   * TEST ONLY (`release-on-unknown-stop`): a row move whose outcome is unknown answers `null` (the
   * caller releases the shard), as before `pnpm sim --aimed` seed 20. Default false: it answers
   * `"unknown"`, and the row is left as it is.
   */
  readonly releaseOnUnknown?: boolean | undefined;
}

/** A hand-over that moved the row: the new term's row values, and the standby that holds it now. */
export interface HandOverDone {
  readonly moved: HandedOverTerm;
  readonly standby: MemberIdentity;
  /**
   * The member the moved row names as the new epoch's in-sync standby: the former leader, which
   * keeps the table, and stays named past the taker's adoption (a balance move). Default none: the standby fields were
   * cleared (a stop).
   */
  readonly former?: MemberIdentity | undefined;
}

/** True when `term` can be handed over with its state: its standby is in sync now. */
export function canHandOver(term: ShardTerm): boolean {
  const replication = term.replicator?.replication;
  return replication !== undefined && replication.standby !== null && replication.rule.state === "in-sync";
}

/** What {@link awaitHandOverAck} needs. */
export interface HandOverAckContext {
  /** Bounds the wait (the rule records not-in-sync on its own after a third of one). */
  readonly leaderLeaseMs: number;
  readonly logger: Logger;
  /** Fields every log line of this hand-over carries. */
  readonly where: Readonly<Record<string, unknown>>;
  /**
   * TEST ONLY (`hand-over-stale-ack`): wait for the log as it stands, as before issue 29, instead
   * of appending the hand-over entry: an earlier cumulative acknowledgement then counts, even from
   * a standby that died since. Default false.
   */
  readonly staleAck?: boolean | undefined;
  /** The places of the requests the term holds back in its lease-wait (`ShardTerm.heldBackPlaces`): the entry carries them. Default none. */
  readonly heldBack?: HeldBackPlaces | undefined;
}

/**
 * Append the hand-over entry ({@link handOverEntry}: the held-back places with it) to a term whose gate is closed or shut
 * (nothing else is appended any more) and wait for the standby's acknowledgement of it: a fresh
 * round trip, sent after the gate closed, so it proves the standby is alive and holds the whole
 * table now. Answers `"acked"`, or why not: `"late"` (no acknowledgement within a leader lease),
 * `"unreplicated"` (the rule recorded the standby not in sync first), `"failed"` (deposed, closed).
 */
export async function awaitHandOverAck(replication: ShardReplication, context: HandOverAckContext): Promise<"acked" | "late" | "unreplicated" | "failed"> {
  const { leaderLeaseMs, logger, where } = context;
  const seq = context.staleAck === true ? replication.log.lastSeq : replication.append(handOverEntry(context.heldBack ?? {}), true);
  let cancel = (): void => undefined;
  const late = new Promise<"late">((resolve) => {
    cancel = replication.clock.setTimer(() => resolve("late"), leaderLeaseMs);
  });
  const waitFrom = replication.clock.now();
  try {
    const outcome = await Promise.race([replication.whenAcked(seq).catch(() => "failed" as const), late]);
    // Test mode (--log-level debug): how long the final acknowledgement took.
    logger.debug({ ...where, standby: replication.standby?.serverId, outcome, seq, waitedMs: Math.round(replication.clock.now() - waitFrom) }, "hand-over: final log wait over");
    return outcome;
  } finally {
    cancel();
  }
}

/**
 * TEST ONLY (`LEASEHOLD_TEST_HAND_OVER_PAUSE_MS`): wait `pauseMs` on the replication's clock between
 * the final acknowledgement and the row move (nothing when undefined or 0).
 */
export async function pauseBeforeMove(replication: ShardReplication, pauseMs: number | undefined): Promise<void> {
  if (pauseMs !== undefined && pauseMs > 0) await new Promise<void>((resolve) => replication.clock.setTimer(resolve, pauseMs));
}

/**
 * Hand a term whose gate already closed (`ShardTerm.end(error, true)`: nothing more is granted or
 * appended, its replication still open) to its in-sync standby: append the hand-over entry and
 * wait for the standby's acknowledgement of it ({@link awaitHandOverAck}), then move the row to it
 * in one statement fenced by the epoch, which NOTIFYs; the standby serves at once with the table.
 * Answers the new row and its holder when the row moved; `null` when it could not (the caller then
 * releases the shard as without a standby: a stop's last resort); `"unknown"` when the row move's
 * statement failed (a timeout, its outcome unknown, or any other error: leaving the row is safe
 * either way, and only a timeout can hide a commit): the caller leaves the row as it is. Moved, the standby
 * adopts it; not, it lapses, still naming the standby in sync, and the standby takes it over with
 * the table (a release would let the next leader start empty, every lock lost).
 */
export async function handOverTerm(term: ShardTerm, context: HandOverContext): Promise<HandOverDone | "unknown" | null> {
  const { coordinator, serverId, incarnation, leaderLeaseMs, logger, reason } = context;
  const where = { shard: term.shard, epoch: term.epoch, leaderId: term.leaderId, reason };
  const replication = term.replicator?.replication;
  try {
    // A standby move in flight is settled first: the row then names one standby for sure.
    await replication?.settleMove();
    const standby = replication?.standby ?? null;
    if (replication === undefined || standby === null) return null;
    const outcome = await awaitHandOverAck(replication, { leaderLeaseMs, logger, where, staleAck: context.staleAck, heldBack: term.heldBackPlaces() });
    if (outcome !== "acked") {
      logger.warn({ ...where, standby: standby.serverId, outcome }, "hand-over abandoned: the standby did not acknowledge the hand-over entry; releasing the shard");
      return null;
    }
    await pauseBeforeMove(replication, context.pauseMs);
    let moved: HandedOverTerm | null;
    try {
      moved = await coordinator.handOver({ shard: term.shard, epoch: term.epoch, serverId, incarnation }, standby, leaderLeaseMs);
    } catch (err) {
      if (context.releaseOnUnknown === true) throw err;
      logger.warn({ ...where, err, standby: standby.serverId }, "hand-over's row move failed (its outcome may be unknown): leaving the row as it is (its standby adopts it, or takes it over with the table once it lapses)");
      return "unknown";
    }
    if (moved === null) {
      logger.warn({ ...where, standby: standby.serverId }, "hand-over matched nothing (the row is no longer this term's, or its standby not in sync); releasing the shard");
      return null;
    }
    const heldBackCarried = Object.values(term.heldBackPlaces()).reduce((n, line) => n + line.length, 0);
    const carried = { locksCarried: term.handedOver?.locks ?? 0, waitersCarried: term.handedOver?.waiters ?? 0, heldBackCarried };
    logger.info({ ...where, standby: standby.serverId, newEpoch: moved.epoch, entries: replication.log.lastSeq, ...carried }, "shard handed over");
    return { moved, standby: { serverId: standby.serverId, incarnation: standby.incarnation } };
  } catch (err) {
    logger.warn({ ...where, err }, "hand-over failed; releasing the shard");
    return null;
  } finally {
    term.finishHandOver(unavailable(`this server handed shard ${term.shard} over; re-send to its new leader`, 100, { shard: term.shard }));
  }
}
