import type { NamespaceSummary } from "@leasehold/protocol";
import type { ServiceMetrics } from "../service/embedded-lock-service.js";
import { CallbackMetric } from "./callback-metric.js";
import { Counter } from "./counter.js";
import { Histogram } from "./histogram.js";
import type { Metric } from "./metric.js";
import { MetricRegistry } from "./metric-registry.js";
import { DEFAULT_TOP_NAMESPACES, namespaceMetrics } from "./namespace-metrics.js";
import { runtimeRegistry } from "./runtime-metrics.js";

/**
 * The `operation` label of request metrics: the protocol operations (the six of v1, the batch
 * additions `lock-batch` and `lock-cancel`, and `wait-for-locks` and `timestamp-leases`) plus the GET routes,
 * and `unmatched` for every other path. Fixed in code so a client can never mint new series.
 */
export type RouteLabel =
  | "lock"
  | "unlock"
  | "refresh"
  | "timestamps"
  | "transactions/start"
  | "immutable-timestamp"
  | "lock-batch"
  | "lock-cancel"
  | "wait-for-locks"
  | "timestamp-leases"
  | "timestamp-leases/min"
  | "lock-watches"
  | "lock-events"
  | "namespaces"
  | "locks"
  | "revoke"
  | "events"
  | "ui"
  | "health"
  | "cluster"
  | "cluster-members"
  | "metrics"
  | "unmatched";

/**
 * Latency buckets in seconds. Most answers take well under a millisecond; `lock` can long-poll up
 * to 60 s, so the top buckets reach that far to keep waits visible rather than lumped into `+Inf`.
 */
export const REQUEST_DURATION_BUCKETS = [
  0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60,
] as const;

/** The server's metrics: what it renders at `GET /metrics` and the hook the HTTP layer feeds. */
export interface ServerMetrics {
  /** Record one finished (or abandoned) request. `status` is the HTTP status, 499 for a client gone. */
  observeRequest(operation: RouteLabel, status: number, seconds: number): void;
  /** The Prometheus text exposition of the hand-written metrics (lock table, requests, namespaces). */
  render(): string;
  /** {@link render} followed by the process and runtime metrics of prom-client, when enabled. */
  renderAll(): Promise<string>;
}

/** Options of {@link createServerMetrics}; every field is optional. */
export interface ServerMetricsOptions {
  /**
   * Counts per namespace, read at scrape time for the per-namespace gauges and the ages of the
   * oldest hold and longest wait. Default: none, and those families are left out.
   */
  readonly namespaces?: (() => readonly NamespaceSummary[]) | undefined;
  /** How many of the busiest namespaces get their own series. Default 10 (see `DEFAULT_TOP_NAMESPACES`). */
  readonly topNamespaces?: number | undefined;
  /**
   * Append prom-client's process and runtime metrics (event-loop delay, GC, heap, CPU, memory).
   * Default true: they are what tells a slow server from a slow network.
   */
  readonly runtime?: boolean | undefined;
  /** More metrics to serve beside these, for example a cluster member's. Default: none. */
  readonly extra?: readonly Metric[] | undefined;
}

/**
 * Build the metric set of one server. Lock-table numbers are read from `read()` at scrape time;
 * request latency and counts are kept here. No label ever carries a token, descriptor, namespace
 * or request id: those are unbounded and some of them are secrets.
 */
export function createServerMetrics(
  read: () => ServiceMetrics,
  info: { readonly version: string; readonly leaderId: string },
  options: ServerMetricsOptions = {},
): ServerMetrics {
  const registry = new MetricRegistry();
  const gauge = (name: string, help: string, pick: (m: ServiceMetrics) => number): void => {
    registry.register(new CallbackMetric(name, help, "gauge", () => pick(read())));
  };
  const counter = (name: string, help: string, pick: (m: ServiceMetrics) => number): void => {
    registry.register(new CallbackMetric(name, help, "counter", () => pick(read())));
  };

  registry.register(
    new CallbackMetric("leasehold_info", "Always 1; labels name the server version and its leader id.", "gauge", () => 1, {
      version: info.version,
      leader_id: info.leaderId,
    }),
  );
  gauge("leasehold_held_locks", "Held (descriptor, token) pairs, immutable-timestamp locks excluded.", (m) => m.heldLocks);
  gauge("leasehold_held_tokens", "Live tokens: granted lock requests plus immutable-timestamp locks.", (m) => m.heldTokens);
  gauge("leasehold_waiting_requests", "Lock requests waiting now.", (m) => m.waitingRequests);
  gauge("leasehold_namespaces", "Namespaces created since start.", (m) => m.namespaces);
  counter("leasehold_grants_total", "Descriptor grants since start.", (m) => m.grantsTotal);
  counter("leasehold_timeouts_total", "Lock requests answered timeout since start.", (m) => m.timeoutsTotal);
  counter("leasehold_lease_lapses_total", "Tokens released because nothing refreshed them within the lease.", (m) => m.leaseLapsesTotal);
  counter("leasehold_unlocks_total", "Tokens released by unlock since start.", (m) => m.unlocksTotal);
  counter("leasehold_abandoned_total", "Waiting lock requests abandoned because the client went away.", (m) => m.abandonedTotal);
  counter("leasehold_revoked_total", "Holders released by an admin's revoke since start.", (m) => m.revokedTotal ?? 0);
  if (options.namespaces !== undefined) {
    for (const metric of namespaceMetrics(options.namespaces, options.topNamespaces ?? DEFAULT_TOP_NAMESPACES)) registry.register(metric);
  }

  const requests = registry.register(
    new Counter("leasehold_requests_total", "HTTP requests answered, by operation and status (499: client gone first).", ["operation", "status"]),
  );
  const duration = registry.register(
    new Histogram(
      "leasehold_request_duration_seconds",
      "Time from request arrival to answer, by operation; lock includes long-poll waits.",
      ["operation"],
      REQUEST_DURATION_BUCKETS,
    ),
  );

  // Cluster mode adds its own families (shards led, transitions, coordinator latency, ...).
  for (const metric of options.extra ?? []) registry.register(metric);

  return {
    observeRequest(operation, status, seconds) {
      requests.inc({ operation, status: String(status) });
      duration.observe({ operation }, seconds);
    },
    render: () => registry.render(),
    async renderAll() {
      const own = registry.render();
      return options.runtime === false ? own : own + (await runtimeRegistry().metrics());
    },
  };
}
