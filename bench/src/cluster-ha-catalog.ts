import type { FigureInfo } from "./catalog.js";

/** The section of docs/benchmarks.md issue 21's figures go in. */
export const SURVIVAL_SECTION = "Cluster mode: locks that outlive their leader (standby per shard)";

/**
 * Issue 21's figures (`pnpm bench cluster`, bench/src/cluster-ha-figures.ts): locks kept through a
 * rolling restart and a crash, fresh grants after one, and what a standby costs on the hot path.
 */
export const SURVIVAL_CATALOG: Readonly<Record<string, FigureInfo>> = {
  rolling_restart_locks_lost: {
    section: SURVIVAL_SECTION,
    meaning:
      "A rolling restart of a 3-server cluster (`--shards 3`, `--replicas 1`, default leases) under a paced load: each member in turn gets SIGTERM (hand-over with state to the shard's standby), is started again with the same `--server-id` and port, and the next one waits until every shard is led with an in-sync standby again. 20 locks are held in each of three namespaces (one per shard) by clients routed over every member; a lock is lost when a refresh after the restart does not return it or the client reported it on `lostLocks`.",
    target: { op: "<=", value: 0 },
  },
  rolling_restart_lock_p99_ms: {
    section: SURVIVAL_SECTION,
    meaning:
      "p99 of the time to acquire of the load's lock calls (24 callers, 8 per namespace, lock + tryUnlock with 10 ms between pairs) that started between the first SIGTERM and the last member's readiness: from the first `lock` call to the grant, the caller's re-sends after an `UNAVAILABLE` answer (10 ms apart) included, since that is what an application waits through. The note gives the same load's figures before the first SIGTERM.",
    target: { op: "<=", value: 250 },
  },
  rolling_restart_fresh_grant_ms_p50: {
    section: SURVIVAL_SECTION,
    meaning:
      "ms from each SIGTERM of the rolling restart to the first lock on a free descriptor granted in a namespace the victim led, by another member (a raw `lock` to each of them every 5 ms): how long a deploy stalls new locks of a namespace. Before issue 21 this was the whole lease-wait (10,026 ms in the issue's report).",
    target: { op: "<=", value: 100 },
  },
  sigkill_locks_lost: {
    section: SURVIVAL_SECTION,
    meaning:
      "SIGKILL of a leader whose shards all have an in-sync standby (3 servers, `--shards 3`, default leases): locks held in its namespace (20 per trial) that a refresh after the takeover did not return, or that the client reported lost, summed over the trials.",
    target: { op: "<=", value: 0 },
  },
  sigkill_fresh_grant_ms_p50: {
    section: SURVIVAL_SECTION,
    meaning:
      "ms from that SIGKILL to the first lock on a free descriptor granted in the victim's namespace by another member. The in-sync standby takes the shard by the usual rule (row expired on the database clock and seen unchanged for a leader lease) and grants at once, with no lease-wait, so this is failure detection: about one 3 s leader lease.",
    target: { op: "<=", value: 3_500 },
  },
  sigkill_fresh_grant_ms_no_standby_max: {
    section: SURVIVAL_SECTION,
    meaning:
      "The same with `--replicas 0`, the slowest trial: without a standby the taker starts an empty table and waits out the longest `validForMs` the old leader answered (recorded in its row) plus the margin before it grants, after the leader lease of failure detection. Every lock held in the namespace is lost (the note counts them); that is what a standby is for.",
  },
  sigkill_fresh_grant_over_bound_no_standby: {
    section: SURVIVAL_SECTION,
    meaning:
      "That slowest trial over its bound, `validForMs` (as the old leader answered it) plus two leader leases: at most 1 when the lease-wait is `validForMs`, not `--lease-ms` (10 s with the default 5 s promise before issue 21).",
    target: { op: "<=", value: 1 },
  },
  cluster_pairs_ratio_no_standby_over_single_c64: {
    section: SURVIVAL_SECTION,
    meaning:
      "The cost figure of issue 12, now for a cluster with `--replicas 0`: lock+tryUnlock pairs/s of 64 callers through a 3-server cluster whose one shard has no standby, over the single server, in the same trials and rounds as `cluster_pairs_ratio_over_single_c64` (what cluster routing and the serving gate cost, without replication).",
    target: { op: ">=", value: 0.95 },
  },
  cluster_c1_p50_ratio_over_single: {
    section: SURVIVAL_SECTION,
    meaning:
      "One caller doing lock + awaited unlock (not tryUnlock: a lone lock right after a tryUnlock waited about 8 ms at the median on this machine, against 0.5 ms after an awaited unlock, a client-side delay that would hide the server path): the p50 lock call through the cluster with an in-sync standby over the single server's, in the same trial (each target for a few seconds after the c64 rounds, in rotating order), median of the trials. A lone grant pays one extra round trip to the standby before it is answered.",
    target: { op: "<=", value: 1.5 },
  },
  cluster_standby_cpu_us_per_grant: {
    section: SURVIVAL_SECTION,
    meaning:
      "CPU (user + system, from `/proc/<pid>/stat`) the standby process used during the c64 rounds of the cluster with a standby, over the grants made in them: what following the log costs per grant (it also applies the releases that tryUnlock sends).",
  },
  cluster_leader_cpu_us_per_grant: {
    section: SURVIVAL_SECTION,
    meaning: "The same for the leader of that cluster: serving the pair, plus appending it to the log, sending it and holding the answer for the acknowledgement.",
  },
  single_cpu_us_per_grant: {
    section: SURVIVAL_SECTION,
    meaning: "The same for the single server in its rounds: the baseline of the two figures above.",
  },
};
