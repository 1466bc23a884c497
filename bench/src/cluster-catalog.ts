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
  "**Measured on this shared 2-core VM while other work ran (load average 8–12 during the run), PostgreSQL on the same machine.** Failover after a SIGKILL with the default 3 s leader lease: p50 3,082 ms, max 3,293 ms over 8 trials (targets 3,500 / 4,500 ms): a taker needs the row expired on the database clock and watched unchanged for a whole leader lease, so one lease plus part of a renewal period is the floor. A SIGTERM hand-over (NOTIFY) took 104–362 ms, p50 164 ms (target 300), measured from a balanced cluster. **Not from an unbalanced one:** in the first run of this suite, where a trial could start while the server restarted by the previous trial was still in its join wait, 5 of 8 SIGTERM hand-overs took about 3 s (158, 3,212, 3,327, 241, 151, 3,111, 3,020, 2,974 ms): a released shard is taken only by a server below its share, shares count the joiner (which takes nothing for one leader lease) and any member whose heartbeat is younger than two leases, so the server that could take it at once was at its share and declined. That is a finding for the cluster's balance rules (reliability report, section 5). **The cluster/single ratio (0.848, target 0.95) did not settle on this machine:** the five alternating rounds gave 0.845, 0.987, 1.305, 0.327 and 0.848 (the first run: 0.657, 1.573, 1.209), so the load of the other work moves each 3 s round by more than the difference being measured; the hot path differs from a single server by one gate check per grant and the client's shard lookup, and a quiet-machine run is needed to say whether it meets 0.95. **Scale-out over 2 servers: 1.084** (0.937–1.200): with the benchmark's clients, both servers and PostgreSQL sharing two cores, a second server adds an event loop but no CPU, so near 1 is what this machine can show; on separate machines the figure would be bounded by the clients. **Idle PostgreSQL load: 8.8 statements/s** for three servers (about 9 expected: per server a renewal, a heartbeat and a lease read every second).";
