import type { FigureInfo } from "./catalog.js";

/** The section of docs/benchmarks.md the cluster figures go in. */
export const CLUSTER_SECTION = "Cluster mode (3 servers over PostgreSQL)";

/** The cluster suite's figures (`pnpm bench cluster`, bench/src/suites/cluster.ts). */
export const CLUSTER_CATALOG: Readonly<Record<string, FigureInfo>> = {
  failover_ms_p50: {
    section: CLUSTER_SECTION,
    meaning:
      "SIGKILL of the leader of a namespace's shard in a 3-server cluster with the default 3 s leader lease: ms from the kill to the first timestamp of that namespace served (200) by another server (probed every few ms). A taker acts once the row's expiry passed on the database clock and it watched the row unchanged for a whole leader lease, so this is about one lease plus up to a third of one.",
    target: { op: "<=", value: 3_500 },
  },
  failover_ms_max: {
    section: CLUSTER_SECTION,
    meaning: "The slowest of the same trials.",
    target: { op: "<=", value: 4_500 },
  },
  failover_ms_sigterm_p50: {
    section: CLUSTER_SECTION,
    meaning:
      "SIGTERM of the leader (a planned hand-over): it releases its shards with NOTIFY and another server takes them at once. ms from the signal to the first timestamp served by another server.",
    target: { op: "<=", value: 300 },
  },
  cluster_pairs_ratio_over_single_c64: {
    section: CLUSTER_SECTION,
    meaning:
      "lock+tryUnlock pairs/s of 64 callers on one `LockClient.http({ baseUrls })` through a 3-server cluster whose one shard is led by one server, over the same callers with `baseUrl` against a single server, rounds alternating in the same run. What cluster routing and the serving gate cost on the hot path.",
    target: { op: ">=", value: 0.95 },
  },
  cluster_scaleout_ratio_2_servers: {
    section: CLUSTER_SECTION,
    meaning:
      "Aggregate lock+tryUnlock pairs/s of two namespaces (32 callers each, one client each), each namespace led by its own server of a 2-server cluster, over both led by the one server of a 1-server cluster, same run. On this 2-core machine the two client processes' work, both servers and PostgreSQL share two CPUs, so the ratio shows the cost of spreading, not the scale-out separate machines would give.",
  },
  coordinator_statements_per_s_idle: {
    section: CLUSTER_SECTION,
    meaning:
      "PostgreSQL statements per second of an idle 3-server cluster with the default leader lease, from the servers' own `leasehold_coordinator_statement_seconds_count` (renewal, heartbeat and lease read every third of a lease per server; the LISTEN connection's traffic is not counted).",
  },
};
