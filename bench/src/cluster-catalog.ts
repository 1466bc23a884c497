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

/** The paragraph under the cluster section's heading: the run's conditions and what the figures say. */
export const CLUSTER_INTRO =
  "**Measured on a quiet 2-core VM (nothing else running but the run itself), PostgreSQL on the same machine.** Failover after a SIGKILL with the default 3 s leader lease: p50 2,672 ms, max 3,698 ms over 8 trials (targets 3,500 / 4,500 ms): a taker needs the row expired on the database clock and watched unchanged for a whole leader lease (counted from the victim's last renewal), so one lease plus part of a renewal period is the floor. A SIGTERM hand-over (release + NOTIFY) took 64–113 ms, p50 84 ms (target 300). The session before, on a loaded machine, 5 of 8 hand-overs took about 3 s when a trial began while a restarted server was still in its join wait: shares then counted the joiner and the stopping server, so the server that could take a released shard was at its share and declined. Shares now count only members past their join wait, a stopping server leaves before it releases, and a released shard nobody took for a whole leader lease is taken regardless (docs/cluster.md, Balance). **The cluster/single ratio is 0.900, short of its 0.95 target**, and the rounds swing widely even on a quiet machine: 8 rounds in ABBA order gave 0.80–1.31 (1.248, 0.900, 0.839, 0.852, 0.945, 0.802, 0.968, 1.314); a separate 4-round probe gave 0.922. CPU profiles of both servers in that probe show them about 75% idle, with the benchmark's own client process the bottleneck on the shared cores. The cluster-only code (routing, the gate's clock read, the term's checks) is about 1% of the leader's busy time. Per pair the leader still used about 15% more CPU than the single server, and that is not yet explained. **Scale-out over 2 servers: 0.804** (0.57–1.33): the benchmark's clients, both servers and PostgreSQL share two cores, so a second server adds an event loop but no CPU, and near 1 is the most this machine can show; on separate machines the figure would be bounded by the clients. **Idle PostgreSQL load: 8.8 statements/s** for three servers (about 9 expected: per server a renewal, a heartbeat and a lease read every second).";
