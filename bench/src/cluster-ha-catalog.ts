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

/** The paragraph under issue 21's section: the run's conditions, what the figures say, what the profile showed. */
export const SURVIVAL_INTRO =
  "**The run in the table: 2026-11-30 03:01–03:21 UTC, `pnpm bench cluster` (full, issue 32's session 25, commit bf62af1), on the shared 2-vCPU machine (AMD EPYC, 24 GiB, Node 20.20.2) with nothing else running (load average 0.9–1.6).** 0 locks lost through the rolling restart and the SIGKILLs with a standby; fresh grants after each SIGTERM of the rolling restart 84 ms at the median (83, 81, 90, 116, 84, 90; target 100: met; 96 ms in the same session's earlier run at 02:19–02:39, 123 in session 19's). About 50 ms of each is the stop's confirmation of its in-sync standby, which polls for the answer every twentieth of the lateness bound (shard-replication.ts `confirmStandby`): an event-driven wait was tried in session 25 and reverted, see \"Where a standby's cost goes\". The paragraphs below describe the runs of 2026-11-27, the table's figures then. " +
  "**The run of 2026-11-27 21:30–21:43 UTC, `pnpm bench cluster` (full), on that session's merged code, on the same shared 2-vCPU machine with nothing else running (load average about 2).** The machine was slower than in the 17:25 run described below, in everything, the single server included: CPU per grant single server 8.47 µs (17:25: 4.92), leader 25.9 (13.6), standby 11.4 (6.4); the paced callers' lock call before the first SIGTERM p50 5.5 ms (2 ms). Two A/B probes on the same machine right after, builds alternating, found no difference between the code before and after this session's refactors: `bench/c1-latency.mjs` (4 rounds; c1 ratio 2.77 before, 2.75 after; c64 cluster 29,132 against 33,198 pairs/s) and `bench/sigterm-timeline.mjs` (6 SIGTERMs each; fresh grant p50 88 ms before, 80 after). So the differences from the 17:25 run are the machine's, and both runs are reported. **In this run:** 0 locks lost through the rolling restart and the SIGKILLs with a standby; fresh grants after each SIGTERM **112 ms** at the median (90, 145, 112, 95, 164, 202; target 100: **missed in this run**, met at 17:25 with 36 ms); the p99 lock call in the rolling restart's window 35.2 ms (target 250); the first fresh grant after a SIGKILL with a standby 2,888 ms (target 3,500); without a standby 9,528 ms at most, 0.866 of the bound. Cost: c64 with a standby **0.283** of the single server (0.97 without one, control 0.976), a lone lock call **3.35** times the single server's. `failover_ms_sigterm_p50` now starts each trial from in-sync standbys (as a deploy does between restarts): 86 ms, all 8 trials 67–114 ms; the 3 trials of 868–981 ms the 17:25 run saw are gone, which confirms they were stops that first had to get their shard a standby. " +
  "**The 17:25–17:38 UTC run (the table's previous run, same day) was taken on the shared 2-vCPU machine (AMD EPYC, 24 GiB) with nothing else running: load average 1.3–2.7 during the run.** Ratios were measured side by side in the same trials and rounds; absolute latencies and CPU per grant are lower than in the 14:20 run of the same day, which ran at load 7 (another agent's probes): the two runs' absolute figures are not comparable, their ratios are. It measures the replication stream (ADR 0015), the taker of a SIGTERM hand-over adopting on the NOTIFY and loading its carried namespaces' timestamp bounds in that same statement, and a leader's passes leaving a shard it is handing over alone (the fix of the CI failure below). " +
  "**SIGKILL of a leader with an in-sync standby: 0 of 100 held locks lost over 5 kills, and the first fresh grant 2,914 ms after the kill at the median (2,935, 2,261, 3,017, 2,768, 2,914; target 3,500):** the standby takes the shard once the row expired and was seen unchanged for a leader lease, with the same `leaderId` and no lease-wait. **Without a standby** the same kill lost every held lock (60 of 60) and the first fresh grant came after 8,471–10,233 ms, within the bound `validForMs` + 2 leader leases = 11,000 ms (ratio 0.93; target ≤ 1): the lease-wait is the old leader's recorded `validForMs` plus the margin, not `--lease-ms`. " +
  "**Rolling restart (2 rounds of the 3 servers, 6 SIGTERMs, 60 locks held throughout): 0 lost; the p99 lock call in the window 16 ms (target 250; p50 0.8 ms, max 546 ms, 10 of 24,790 calls re-sent after a 503); fresh grants after each SIGTERM 36 ms at the median (39, 36, 85, 54, 30, 14; target 100: met).** Every SIGTERM handed its shards over with state. The path, measured with bench/sigterm-timeline.mjs (72 SIGTERMs per build under the paced load, builds alternating, load 1.6–8.8; medians): signal to gate closed 2 ms, gate closed to row moved 11 ms (leaving the member list, the final acknowledgement, the fenced hand-over statement), the adoption statement 13.5 ms, adoption to the probe's first grant 12.5 ms (it was 20 ms while the taker read and extended each carried namespace's bound in statements of its own after adopting: the fresh grant went from 56.5 to 52 ms at the median in that probe, 33.5 to 26.5 ms without the paced load). The 124 ms of the 14:20 run was the same path at load 7, where each PostgreSQL statement took 20–140 ms. " +
  "**SIGTERM of a leader, first timestamp elsewhere** (`failover_ms_sigterm_p50`, the older figure of the section above): 46 ms at the median, but 3 of the 8 trials took 868–981 ms, as in the 14:20 run (885–976 ms). Most likely (not traced in this run) the victim's shard then had no in-sync standby yet: each trial waits only until every server leads one shard, not until the standbys are in sync as the rolling restart does, so a stop may first get a standby in sync (up to 2 leader leases) before it hands over. " +
  "**Found on the way (CI, not this run): a leader's own pass released a shard it was handing over.** Until the row moves it still names the leader at the term's epoch while no term leads it, and a pass in flight at SIGTERM (or one beside a balance move) released it as an orphan; the hand-over then matched nothing and the taker started the shard empty. Passes now count such a row as the leader's own (`cluster-hand-over-pass.test.ts`; its control `release-handing-over` loses the lock). " +
  "**Cost: missed.** With a standby, c64 lock+tryUnlock ran at **0.369** of the single server (target 0.8; per-trial medians 0.341–0.393, all rounds 0.309–0.481), against **1.02** for the same cluster with `--replicas 0` (issue 12's 0.95: met) and 1.001 for the control, in the same rounds; a lone lock call took **2.39×** the single server's at p50 (target 1.5; per trial 2.25–2.86; single server 92–105 µs, cluster 222–284 µs). CPU per grant over the c64 rounds: single server 4.9 µs, leader 13.6 µs, standby 6.4 µs (the 14:20 run, loaded: 9.3, 33.7, 14.6). " +
  "**What bounds it.** At c64 the leader's CPU per grant is 2.8 times the single server's: socket writes (`writev` for answers, `writeBuffer` for frames; on this VM a loopback write also pays for delivering to the receiver), serialising each grant's entry and its HMAC, and the promises that hold each grant's answer for the acknowledgement (bench/results/profile-cluster-after.md). A lone grant (ADR 0015, \"Where a lone grant's extra time goes\", measured with bench/c1-latency.mjs): two more process wake-ups (the floor for two Node processes passing a message over loopback is about 20 µs per hop here), four MACs, two JSON encodings and decodings and the replica's apply; a build without the frame MACs (unsafe, measured only) was 32–48 µs faster per lone grant, and neither a pure-JavaScript HMAC, pre-keyed hash copies, one-buffer frames nor reused timers moved it beyond the run-to-run spread without costing c64 throughput. What could still move c64: entries encoded once in a compact binary form rather than as JSON objects, one hold per lock batch rather than per entry, and frames and answers of one turn written with one syscall.";
