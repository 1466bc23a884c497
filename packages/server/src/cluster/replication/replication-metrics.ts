import { CallbackMetric } from "../../metrics/callback-metric.js";
import { Counter } from "../../metrics/counter.js";
import { Histogram } from "../../metrics/histogram.js";
import type { Metric } from "../../metrics/metric.js";
import type { ClusterAuthRefusal } from "./cluster-key.js";

/** Buckets of acknowledgement latency, in seconds: a healthy standby on the same network answers in about a millisecond. */
const ACK_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1] as const;

/** One led shard's replication, as the metrics read it. */
export interface ShardReplicationView {
  /** Entries appended but not acknowledged by the standby. */
  readonly lagEntries: number;
  /** Age of the oldest unacknowledged entry (ms). */
  readonly lagMs: number;
  /** The row says the standby is in sync. */
  readonly inSync: boolean;
}

/**
 * Replication metrics of one server (docs/cluster.md "Metrics"), in the style of
 * {@link ClusterMetrics}: gauges read at scrape time from the shards this server leads, summed or
 * maxed over them (no per-shard label: the series count stays fixed), and labels from fixed sets.
 */
export class ReplicationMetrics {
  readonly ackLatency = new Histogram(
    "leasehold_replication_ack_seconds",
    "Round trip of a replication message to the standby and its acknowledgement.",
    [],
    ACK_BUCKETS,
  );
  readonly notInSync = new Counter(
    "leasehold_replication_not_in_sync_total",
    "Times a leader recorded in_sync = false because its standby was late (a third of the leader lease).",
  );
  readonly resyncs = new Counter("leasehold_replication_in_sync_total", "Times a leader recorded in_sync = true (a standby acknowledged a snapshot and the log after it).");
  readonly refusedAuth = new Counter<"reason">(
    "leasehold_replication_unauthenticated_total",
    "Server-to-server requests refused for want of a valid cluster-key signature, by reason: missing, malformed, stale, signature, body.",
    ["reason"],
  );

  /** @param shards the replication of every shard this server leads now. */
  constructor(private readonly shards: () => Iterable<ShardReplicationView>) {}

  /** Record a refused authentication. */
  unauthenticated(reason: ClusterAuthRefusal): void {
    this.refusedAuth.inc({ reason });
  }

  /** Every metric, for the server's registry. */
  all(): Metric[] {
    const fold = (f: (acc: number, v: ShardReplicationView) => number): number => {
      let acc = 0;
      for (const v of this.shards()) acc = f(acc, v);
      return acc;
    };
    return [
      new CallbackMetric("leasehold_replication_in_sync_shards", "Shards led here whose row says the standby is in sync.", "gauge", () => fold((a, v) => a + (v.inSync ? 1 : 0))),
      new CallbackMetric("leasehold_replication_standby_lag_entries", "Entries not yet acknowledged by the standby, summed over the shards led here.", "gauge", () => fold((a, v) => a + v.lagEntries)),
      new CallbackMetric(
        "leasehold_replication_standby_lag_seconds",
        "Age of the oldest entry not yet acknowledged by a standby, over the shards led here (0: none waiting).",
        "gauge",
        () => fold((a, v) => Math.max(a, v.lagMs)) / 1000,
      ),
      this.ackLatency,
      this.notInSync,
      this.resyncs,
      this.refusedAuth,
    ];
  }
}
