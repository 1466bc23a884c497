import type { FigureInfo } from "./catalog.js";

/** The section of docs/benchmarks.md the floor figures go in. */
export const FLOOR_SECTION = "Cluster mode: the floor of a standby's cost (echo standby)";

/** The `cluster-floor` suite's figures (`pnpm bench cluster-floor`, bench/src/suites/cluster-floor.ts). */
export const FLOOR_CATALOG: Readonly<Record<string, FigureInfo>> = {
  cluster_floor_c64_echo_over_single: {
    section: FLOOR_SECTION,
    meaning:
      "c64 lock+tryUnlock pairs/s through a 3-server cluster (`--shards 1 --replicas 1`) whose leader's replication connection goes to a bare TCP echo server in a process of its own (`LEASEHOLD_TEST_ECHO_STANDBY_PORT`, benchmark only: one byte there and back per message, no encoding, no MAC, nothing applied), over a single server in the same rounds. The leader's own side (entries built, answers held for the acknowledgement) is unchanged. This is the floor for `cluster_pairs_ratio_over_single_c64` (issue 21's target 0.8) on the machine at hand: a standby that does any work cannot do better than one that does none. Lower median of all rounds; trials with new processes, three targets in a Latin-square order.",
  },
  cluster_floor_c64_standby_over_single: {
    section: FLOOR_SECTION,
    meaning: "The same rounds, through the same kind of cluster with its real standby: what encoding, authenticating and applying cost beyond the floor.",
  },
  cluster_floor_c1_echo_over_single: {
    section: FLOOR_SECTION,
    meaning:
      "One caller, lock + awaited unlock: the echo-standby cluster's p50 lock call over the single server's, median of the trials. The floor for `cluster_c1_p50_ratio_over_single` (issue 21's target 1.5) on this machine; the note gives the mean round trip to the echo server as the leader measured it.",
  },
  cluster_floor_c1_standby_over_single: {
    section: FLOOR_SECTION,
    meaning: "The same trials, the cluster with its real standby.",
  },
};

/** The paragraph under the floor's section: the run, and what the floor says of issue 21's cost targets. */
export const FLOOR_INTRO =
  "**The run in the table: 2026-11-27 21:07–21:12 UTC, `pnpm bench cluster-floor` (full), on the shared 2-vCPU machine (AMD EPYC, Firecracker VM, 24 GiB, Node 20.20.2) with nothing else running (load average under 2).** Issue 21 asks for a cluster with a standby at 0.8 of the single server's c64 pairs per second and at most 1.5 times its lone lock call. To tell what the code costs from what the machine allows, this suite measures, in the same trials and rounds, a single server, a cluster whose standby is its real standby, and a cluster whose leader sends each replication message as one byte to a TCP echo server in a process of its own and takes the byte's return as the acknowledgement (`LEASEHOLD_TEST_ECHO_STANDBY_PORT`, benchmark only and unsafe: the echo holds nothing). The echo standby does no work at all, so no standby can do better; the leader's own side is unchanged. " +
  "**One caller: the floor is 1.92 times the single server (per trial 1.75–2.01), against the target 1.5.** The single server's lone lock call took 90 µs at the median; the target leaves 45 µs for everything a standby adds, and the round trip to the echo server alone, as the leader measured it during the same calls, took 92 µs on average: the message has to wake a process that sleeps between calls, and on this VM that wake-up and the byte's way back cost more than the whole budget. The real standby added its work on top: 272 µs, 2.68 times. " +
  "**64 callers: the floor is 0.437 of the single server (all 24 rounds 0.36–0.55), against the target 0.8.** With 64 callers the client and the leader keep both vCPUs busy, so the third process, even one that only echoes a byte, waits for a CPU before it can answer: the round trip to the echo server was 394 µs during the rounds, four times its idle 92 µs, and every caller's next lock waits for it. The real standby, which also decodes, authenticates and applies every entry (10.1 µs of CPU per pair, taken from the same two vCPUs), reached 0.292 in the same rounds (its round trip 925 µs). The leader with the echo standby still used 19.0 µs of CPU per pair against the single server's 7.9 (answers held and written later, entries built, one more socket), so a leaner leader would raise the floor somewhat; it would not remove the wait for a third process on two busy CPUs. " +
  "**What this says of issue 21's cost targets:** on this machine they are below what a standby that does nothing reaches, so they cannot be met here by any implementation that answers a grant only after another process acknowledged it (DESIGN.md's rule; answering first is the `answer-before-ack` negative control, which the reliability suite's exclusion check catches). They need a machine where the standby does not share two CPUs with the leader and the clients. ADR 0016 records the decision.";
