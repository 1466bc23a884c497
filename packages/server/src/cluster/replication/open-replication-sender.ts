import { randomUUID } from "node:crypto";
import type { ReplicationLog } from "./replication-log.js";
import { ReplicationSender } from "./replication-sender.js";
import type { ShardReplicationOptions, StandbyTarget } from "./shard-replication-options.js";

/** Where a stream's events go (its {@link ShardReplication} decides what they count for). */
export interface SenderEvents {
  /** The standby acknowledged everything up to `ackedSeq` (cumulative). */
  readonly acknowledge: (ackedSeq: number) => void;
  /** The same, for the rule's join (only the stream of the standby the row names counts). */
  readonly streamAcked: (ackedSeq: number) => void;
  /** The standby refused the stream: it will acknowledge nothing more. */
  readonly refused: () => void;
}

/**
 * A new stream of `log` to `target` (not started): the snapshot at `snapshot.seq` first, then the
 * log, under a fresh stream id, with the replication's transport, clock, window and metrics.
 */
export function openReplicationSender(
  options: ShardReplicationOptions,
  log: ReplicationLog<unknown>,
  target: StandbyTarget,
  snapshot: { readonly seq: number; readonly payload: unknown },
  events: SenderEvents,
): ReplicationSender<unknown> {
  const { term, leaderId, metrics, logger } = options;
  return new ReplicationSender<unknown>({
    log,
    transport: options.connect(target),
    stream: { shard: term.shard, epoch: term.epoch, leaderId, leaderIncarnation: term.incarnation, standbyIncarnation: target.incarnation, streamId: randomUUID() },
    snapshot,
    clock: options.clock,
    retryMs: Math.max(10, Math.floor(options.lateMs / 10)),
    maxInFlight: options.maxInFlight,
    acknowledge: events.acknowledge,
    onAck: (acked, ms) => {
      metrics?.ackLatency.observe({}, ms / 1000);
      events.streamAcked(acked);
    },
    onRefused: (refusal) => {
      logger.warn({ shard: term.shard, epoch: term.epoch, standby: target.serverId, code: refusal.code, reason: refusal.message }, "standby refused the replication stream");
      events.refused();
    },
    onError: (err) => logger.debug({ shard: term.shard, standby: target.serverId, err }, "replication exchange failed; re-sending"),
  });
}
