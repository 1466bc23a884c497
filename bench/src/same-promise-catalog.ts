import type { FigureInfo } from "./catalog.js";
import { SAME_PROMISE_SETUPS, SETUP_ROLES, type SetupName } from "./same-promise-setups.js";

/** The section of docs/benchmarks.md the side-by-side figures go in. */
export const SAME_PROMISE_SECTION = "Cluster mode beside the peers that make the same promise";

/** What each setup is, as the figures' meanings say it. */
const SETUPS: Readonly<Record<SetupName, string>> = {
  single: "the single server (`--lease-ms 2000`), the baseline: it keeps no lock through its crash",
  cluster_r0: "a 3-server cluster over PostgreSQL, `--shards 1 --replicas 0` (one leader, no standby: a crash loses its locks)",
  cluster_echo:
    "the echo floor: the `--replicas 1` cluster whose leader's replication connection goes to a TCP echo server in a process of its own (`LEASEHOLD_TEST_ECHO_STANDBY_PORT`, benchmark only and unsafe: each message costs one byte there and back, no encoding, no MAC, nothing applied), so what it pays over the single server is waiting for another process at all, which no standby can undercut",
  cluster_auth:
    "the auth floor: the `--replicas 1` cluster whose standby, a real member, checks each frame's MAC and signs each answer but reads each entries message's last sequence number from its bytes and decodes and applies nothing (`LEASEHOLD_TEST_STANDBY_FLOOR=auth`, benchmark only and unsafe: it holds none of the entries), so what it pays over the echo floor is authenticating every message both ways in a leasehold process",
  cluster_decode:
    "the decode floor: the same with `LEASEHOLD_TEST_STANDBY_FLOOR=decode`, the standby also decoding each message (`JSON.parse` and the shape checks) and still applying nothing: what the real standby costs before its apply",
  cluster_r1: "a 3-server cluster over PostgreSQL, `--shards 1 --replicas 1` with its standby in sync (every answer that reveals a grant waits for the standby's acknowledgement)",
  redis_replica:
    "a Redis primary with one replica (`redis-server` from PATH, free loopback ports, temp dirs, no persistence); a lock is `SET key token NX PX 10000` and `WAIT 1 1000` in one write on the caller's own connection, counted only when SET answered OK and WAIT at least 1; the unlock is the compare-and-delete script by EVALSHA",
  etcd: "a one-member etcd with its defaults (`etcd` from PATH, temp data dir), through its Lock/Unlock RPCs with a lease: every write a Raft proposal fsynced to its log",
};

/** Each setup's short name, for the figures after its c64 one. */
const SHORT: Readonly<Record<SetupName, string>> = {
  single: "the single server",
  cluster_r0: "the cluster with `--replicas 0`",
  cluster_echo: "the echo floor's cluster",
  cluster_auth: "the auth floor's cluster",
  cluster_decode: "the decode floor's cluster",
  cluster_r1: "the cluster with `--replicas 1`",
  redis_replica: "Redis primary + replica (`SET NX PX` + `WAIT 1` in one write)",
  etcd: "the one-member etcd",
};

/** What each role's process is. */
const ROLES: Readonly<Record<string, string>> = {
  server: "the single server's process",
  leader: "the leader's process",
  standby: "the standby's process",
  primary: "the primary's process",
  replica: "the replica's process",
  member: "the process",
  echo: "the echo server's process (the floor of a standby's own cost: a Node process that reads each message and answers it, doing nothing else)",
};

function entries(): Record<string, FigureInfo> {
  const out: Record<string, FigureInfo> = {};
  for (const setup of SAME_PROMISE_SETUPS) {
    out[`same_promise_pairs_per_s_c64_${setup}`] = {
      section: SAME_PROMISE_SECTION,
      meaning: `Pairs/s of 64 callers, each on 4 keys of its own (lock + tryUnlock for leasehold, lock + unlock not awaited for Redis, lock + awaited unlock for etcd), through ${SETUPS[setup]}. The median of every round of every trial; each trial starts every setup anew, and the setups take turns round by round in a rotating order.`,
    };
    out[`same_promise_c1_p50_us_${setup}`] = {
      section: SAME_PROMISE_SECTION,
      meaning: `One caller doing lock + awaited unlock on 4 keys: the p50 of the lock call (µs, from the call to the grant) through ${SHORT[setup]}; the median of the trials.`,
    };
    for (const role of SETUP_ROLES[setup]) {
      out[`same_promise_cpu_us_per_pair_${setup}_${role}`] = {
        section: SAME_PROMISE_SECTION,
        meaning: `CPU (user + system, /proc/<pid>/stat, all threads) of ${ROLES[role]} of ${SHORT[setup]}, per pair, over a run of the 64 callers paced to 8,000 pairs/s in all (each caller at 125 pairs/s, spread over the period); the median of the trials. A paced load, not full speed, so every setup is measured doing the same work at the same rate: at full speed the CPU per pair also depends on how large the batches grow.`,
      };
    }
  }
  return out;
}

/** The side-by-side figures (`pnpm bench cluster`, also alone as `pnpm bench cluster-peers`). */
export const SAME_PROMISE_CATALOG: Readonly<Record<string, FigureInfo>> = {
  ...entries(),
  same_promise_c64_ratio_cluster_r1_over_redis_replica: {
    section: SAME_PROMISE_SECTION,
    meaning: "c64 pairs/s of the cluster with an in-sync standby over Redis primary + replica with `WAIT 1`, in the same round; the median of the rounds. Issue 32 sets at least 3.",
    target: { op: ">=", value: 3 },
  },
  same_promise_c64_ratio_echo_over_redis_replica: {
    section: SAME_PROMISE_SECTION,
    meaning: "c64 pairs/s of the echo floor's cluster over Redis primary + replica with `WAIT 1`, in the same round; the median of the rounds. The ceiling over the real standby's ratio to Redis (issue 32's target 3): a standby that does nothing.",
  },
  same_promise_cpu_ratio_leader_over_single: {
    section: SAME_PROMISE_SECTION,
    meaning: "At the paced 8,000 pairs/s: the CPU per pair of the leader of the cluster with a standby over the single server's, in the same trial; the median of the trials. Issue 32 sets at most 1.3.",
    target: { op: "<=", value: 1.3 },
  },
  same_promise_c64_ratio_cluster_r1_over_echo: {
    section: SAME_PROMISE_SECTION,
    meaning: "c64 pairs/s of the cluster with its real in-sync standby over the echo floor's, in the same round; the median of the rounds. Issue 32 sets at least 0.9.",
    target: { op: ">=", value: 0.9 },
  },
  same_promise_cpu_ratio_echo_leader_over_single: {
    section: SAME_PROMISE_SECTION,
    meaning: "At the paced 8,000 pairs/s: the CPU per pair of the echo floor's leader over the single server's, in the same trial; the median of the trials. The floor under the leader's ratio: the leader's own side with a standby that costs nothing (no frame encoded, no MAC, one byte there and back).",
  },
  same_promise_c1_p50_us_cluster_r1_minus_echo: {
    section: SAME_PROMISE_SECTION,
    meaning: "One caller's p50 lock call through the cluster with its real standby minus the echo floor's, in the same trial; the median of the trials. Issue 32 sets at most 25 µs.",
    target: { op: "<=", value: 25 },
  },
  same_promise_cpu_ratio_standby_over_single: {
    section: SAME_PROMISE_SECTION,
    meaning: "The same for the standby's CPU per pair over the single server's. Issue 32 sets at most 0.3.",
    target: { op: "<=", value: 0.3 },
  },
  same_promise_cpu_ratio_echo_over_single: {
    section: SAME_PROMISE_SECTION,
    meaning: "The same for the echo server's CPU per pair (the echo floor's standby) over the single server's: the floor under the standby's ratio, a process that reads every message the leader sends and answers it, and does nothing else.",
  },
  ...floorEntries(),
};

/** The ratios of the two floors of an authenticating standby, beside the targets they stand under. */
function floorEntries(): Record<string, FigureInfo> {
  const out: Record<string, FigureInfo> = {};
  for (const [floor, what] of [
    ["auth", "the auth floor (its standby checks each frame's MAC and signs each answer, nothing decoded or applied)"],
    ["decode", "the decode floor (its standby also decodes each message, nothing applied)"],
  ] as const) {
    const doing = floor === "auth" ? "authenticates every frame it acknowledges, with this implementation's framing" : "also decodes every message (JSON)";
    out[`same_promise_cpu_ratio_${floor}_over_single`] = {
      section: SAME_PROMISE_SECTION,
      meaning: `At the paced 8,000 pairs/s: the CPU per pair of the standby of ${what} over the single server's, in the same trial; the median of the trials. What a standby that ${doing} costs before it applies anything, beside the standby's target of 0.3.`,
    };
    out[`same_promise_c64_ratio_${floor}_over_echo`] = {
      section: SAME_PROMISE_SECTION,
      meaning: `c64 pairs/s of ${what} over the echo floor's, in the same round; the median of the rounds. What a standby that ${doing} reaches before it applies anything, beside the target of 0.9 (a median bound: single rounds vary by ±0.2).`,
    };
    out[`same_promise_c1_p50_us_${floor}_minus_echo`] = {
      section: SAME_PROMISE_SECTION,
      meaning: `One caller's p50 lock call through ${what} minus the echo floor's, in the same trial; the median of the trials. What a standby that ${doing} adds before it applies anything, beside the target of 25 µs (a median bound: single trials vary by tens of µs).`,
    };
  }
  return out;
}

/** The paragraph under the section's heading: the setup, and why each choice. */
export const SAME_PROMISE_INTRO =
  "**The setups (issue 32).** `pnpm bench cluster` (and `pnpm bench cluster-peers`, this part alone) starts, in each trial, a single server, a 3-server cluster with `--replicas 0`, one with `--replicas 1` (`--shards 1`, so one leader; the standby's row in sync before anything is measured), the same with the echo floor's standby (a TCP echo server: the yardstick of issue 32, measured in the same run), the same twice more with its real standby in a floor mode (`LEASEHOLD_TEST_STANDBY_FLOOR=auth`: each frame's MAC checked and each answer signed, nothing decoded or applied; `=decode`: each message also decoded; both benchmark only: what authenticating and reading every message cost before the apply), a Redis primary + replica, and a one-member etcd, and runs one workload code over all of them (bench/src/same-promise-trials.ts): c64 rounds (64 callers on 4 keys each), then each setup's server CPU over a run paced to 8,000 pairs/s, then one caller. A setup whose server is not installed is skipped and the run says so (`redis-server`: Debian's `redis-server`; `etcd`: `etcd-server`). " +
  "**Redis primary + replica** is the peer that makes leasehold's cluster promise, a granted lock kept in a second process's memory: the bench starts both `redis-server`s itself on free loopback ports, each with a temp dir as `--dir`, `--save ''` and `--appendonly no` (memory only, as the standby), the replica with `--replicaof`, waits until the primary lists it `online` and it says `master_link_status:up`, and stops both and deletes the dirs after, also when a start fails. Each caller has its own connection (bench/src/peers/resp-connection.ts, a small RESP client, so that the lock's `SET key token NX PX 10000` and `WAIT 1 1000` leave in **one write**); a grant counts only when SET answered OK and WAIT answered at least 1, as a leasehold grant is answered only once its standby acknowledged it (a WAIT that answered 0 would be released and taken again, and counted in the note). " +
  "**The unlock is the compare-and-delete script (EVALSHA) without a WAIT of its own**, by choice: an unlock the replica never saw leaves the key held there until its PX runs out, which delays the next holder after a failover but never lets two hold it, so the promise (no grant revealed that a crash could take back) does not need it, as leasehold's unlock is not held for its standby either; and the next lock written on the same connection waits for it anyway, since WAIT counts the replica's acknowledgement of everything the connection wrote before it. At c64 the unlock is written and not awaited (its answer checked when it comes), like leasehold's `tryUnlock`; the one-caller run awaits it, as it does leasehold's `unlock`. " +
  "**CPU per pair** is read from /proc for each role's process (leader and standby apart, primary and replica apart) over the paced run, where every setup does the same work at the same rate; the note gives the rate each actually kept (etcd, fsyncing each write, may not keep 8,000/s: its CPU is then per pair at the rate it kept).";
