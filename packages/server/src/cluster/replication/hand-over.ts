import type { Logger } from "pino";
import { unavailable } from "../cluster-errors.js";
import type { HandOverReason } from "../cluster-metrics.js";
import type { Coordinator } from "../coordinator.js";
import type { ShardTerm } from "../shard-term.js";

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
}

/** True when `term` can be handed over with its state: its standby is in sync now. */
export function canHandOver(term: ShardTerm): boolean {
  const replication = term.replicator?.replication;
  return replication !== undefined && replication.standby !== null && replication.rule.state === "in-sync";
}

/**
 * Hand a term whose gate already closed (`ShardTerm.end(error, true)`: nothing more is granted or
 * appended, its replication still open) to its in-sync standby: wait until the standby
 * acknowledged the whole log (the waiters included; bounded by a leader lease, and the rule
 * records not-in-sync on its own after a third of one), then move the row to it in one statement
 * fenced by the epoch, which NOTIFYs; the standby serves at once with the table. Answers true when
 * the row moved; false when it could not (the caller then releases the shard as without a standby).
 */
export async function handOverTerm(term: ShardTerm, context: HandOverContext): Promise<boolean> {
  const { coordinator, serverId, incarnation, leaderLeaseMs, logger, reason } = context;
  const where = { shard: term.shard, epoch: term.epoch, leaderId: term.leaderId, reason };
  const replication = term.replicator?.replication;
  const standby = replication?.standby ?? null;
  let timer: NodeJS.Timeout | undefined;
  try {
    if (replication === undefined || standby === null) return false;
    const lastSeq = replication.log.lastSeq;
    const late = new Promise<"late">((resolve) => {
      timer = setTimeout(() => resolve("late"), leaderLeaseMs);
      timer.unref();
    });
    const outcome = await Promise.race([replication.whenAcked(lastSeq), late]);
    if (outcome !== "acked") {
      logger.warn({ ...where, standby: standby.serverId, outcome }, "hand-over abandoned: the standby did not acknowledge the final log; releasing the shard");
      return false;
    }
    const moved = await coordinator.handOver({ shard: term.shard, epoch: term.epoch, serverId, incarnation }, standby, leaderLeaseMs);
    if (moved === null) {
      logger.warn({ ...where, standby: standby.serverId }, "hand-over matched nothing (the row is no longer this term's, or its standby not in sync); releasing the shard");
      return false;
    }
    const carried = { locksCarried: term.handedOver?.locks ?? 0, waitersCarried: term.handedOver?.waiters ?? 0 };
    logger.info({ ...where, standby: standby.serverId, newEpoch: moved.epoch, entries: lastSeq, ...carried }, "shard handed over");
    return true;
  } catch (err) {
    logger.warn({ ...where, err }, "hand-over failed; releasing the shard");
    return false;
  } finally {
    clearTimeout(timer);
    term.finishHandOver(unavailable(`this server handed shard ${term.shard} over; re-send to its new leader`, 100, { shard: term.shard }));
  }
}
