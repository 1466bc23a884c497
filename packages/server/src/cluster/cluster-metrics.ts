import { CallbackMetric } from "../metrics/callback-metric.js";
import { Counter } from "../metrics/counter.js";
import { Histogram } from "../metrics/histogram.js";
import type { Metric } from "../metrics/metric.js";

/** Buckets of coordinator statement latency, in seconds: a healthy PostgreSQL answers in a few ms. */
const STATEMENT_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5] as const;

/** Why a shard was lost: a fixed set, so the label never mints unbounded series. */
export type LossReason = "renewal" | "gate" | "bound" | "stopping" | "balance" | "duplicate";

/** Why a leader gave a shard up on purpose: `sigterm` (its stop: SIGTERM, SIGINT or `close()`) or `balance`. */
export type HandOverReason = "sigterm" | "balance";

/**
 * How a shard given up on purpose went: `carried` (handed to its standby with its table),
 * `released` (without it), `kept` (a balance move its taker did not acknowledge: served on) or
 * `unknown` (a stop's row move whose outcome is unknown: the row left to its in-sync standby).
 */
export type HandOverState = "carried" | "released" | "kept" | "unknown";

/**
 * The cluster metrics of one server (docs/cluster.md "Metrics"). Kept here and handed to the
 * server's registry as extra metrics; labels come only from fixed sets (statement names, reasons).
 */
export class ClusterMetrics {
  readonly transitions = new Counter<"event">("leasehold_cluster_leadership_transitions_total", "Shard leadership changes on this server: event=acquired or lost.", ["event"]);
  readonly losses = new Counter<"reason">(
    "leasehold_cluster_shards_lost_total",
    "Shards this server stopped leading, by reason: renewal (matched nothing or failed too long), gate (serving gate closed: only under a test break; a closed gate otherwise waits for a renewal), bound (fenced extension matched nothing), stopping, balance, duplicate (another live process took over this server id).",
    ["reason"],
  );
  readonly handOvers = new Counter<"reason" | "state">(
    "leasehold_cluster_hand_overs_total",
    "Shards this server gave up on purpose, by reason (sigterm: its stop; balance) and state: carried (handed over with the lock table to an in-sync standby), released (without it: the next leader starts empty after the lease-wait), kept (balance only: the taker did not acknowledge the hand-over, so this server serves on with the table and tries again later) or unknown (sigterm only: the row move's statement failed, a timeout leaving its outcome unknown or another error, so the row was left as it is: its in-sync standby adopts it, or takes it over with the table once it lapses).",
    ["reason", "state"],
  );
  readonly gateClosures = new Counter("leasehold_cluster_gate_closures_total", "Times a serving gate closed by time, no renewal having confirmed the row in time (the term then serves nothing, keeping its table, until a renewal reopens the gate or one that matches nothing ends it).");
  readonly boundExtensions = new Counter("leasehold_cluster_bound_extensions_total", "Timestamp bound extensions stored in PostgreSQL.");
  readonly statements = new Histogram<"statement" | "outcome">(
    "leasehold_coordinator_statement_seconds",
    "Latency of PostgreSQL coordinator statements, by statement and outcome (ok or error).",
    ["statement", "outcome"],
    STATEMENT_BUCKETS,
  );

  /**
   * @param shardsLed shards this server leads now.
   * @param reachable whether the last join attempt or pass reached PostgreSQL (default: always).
   * @param protectedNow whether this server says it is protected (its health's `cluster.protected`; default: never).
   */
  constructor(
    private readonly shardsLed: () => number,
    private readonly reachable: () => boolean = () => true,
    private readonly protectedNow: () => boolean = () => false,
  ) {}

  /** Record one coordinator statement. */
  observeStatement(name: string, seconds: number, ok: boolean): void {
    this.statements.observe({ statement: name, outcome: ok ? "ok" : "error" }, seconds);
  }

  /** Every metric, for the server's registry. */
  all(): Metric[] {
    return [
      new CallbackMetric("leasehold_cluster_shards_led", "Shards this server leads now.", "gauge", this.shardsLed),
      new CallbackMetric(
        "leasehold_cluster_coordinator_reachable",
        "1 when this server's last join attempt or leadership pass reached PostgreSQL, 0 while it cannot (it then answers 503 for shards it cannot serve).",
        "gauge",
        () => (this.reachable() ? 1 : 0),
      ),
      new CallbackMetric(
        "leasehold_cluster_protected",
        "1 when this server says it is protected (every shard it leads has an in-sync standby and every shard it stands by for is in sync, as GET /v1/health?protected answers 200), 0 otherwise; always 0 with --replicas 0.",
        "gauge",
        () => (this.protectedNow() ? 1 : 0),
      ),
      this.transitions,
      this.losses,
      this.handOvers,
      this.gateClosures,
      this.boundExtensions,
      this.statements,
    ];
  }
}
