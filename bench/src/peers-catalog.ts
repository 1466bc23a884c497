import type { FigureInfo } from "./catalog.js";

/** The section the peer figures are reported under in `docs/benchmarks.md`. */
export const PEERS_SECTION = "Peers: leasehold, redlock, etcd and PostgreSQL locks";

/** What each peer is, as said after every figure of it. */
const PEERS: Readonly<Record<string, string>> = {
  leasehold_async:
    "leasehold: `LockClient.http` to the CLI server in a child process over loopback, with lock batching (the default; concurrent `lock` calls coalesce into `lock-batch` calls answered as compact NDJSON lines, while a lone `lock` on an idle client goes as a plain `lock` request), `lock` then `tryUnlock` (the unlock is handed to the background batcher, so a pair ends when the lock is granted).",
  leasehold_sync: "leasehold with lock batching (the default) and an awaited `unlock` instead of `tryUnlock`: two round-trips per pair, like the other peers' pairs.",
  leasehold_unbatched:
    "leasehold with `lockBatching: false`: the leasehold_async calls (`lock` then `tryUnlock`) with one HTTP `lock` request per call, measured in the same rounds; the difference from leasehold_async is what lock batching buys.",
  redlock:
    "redlock 4.2.0 (the latest stable on npm; 5.x is beta only) over one ioredis 6 connection to the Redis at 127.0.0.1:6379, one server (quorum of one): `lock` (a `SET NX PX` script) then an awaited `unlock` (a compare-and-delete script). No wait queue: a taken key is retried every 10 ms ± 5 ms (redlock's default is 200 ms ± 100 ms), without limit.",
  etcd:
    "etcd 3.4 (Debian's `etcd-server`), started by the benchmark as a one-member cluster on free loopback ports with a temp data directory and its defaults (the write-ahead log fsynced on every commit), stopped at the end; skipped when no `etcd` binary is on PATH. etcd's own `Lock`/`Unlock` RPCs (the v3lock gRPC service, one HTTP/2 channel) with a lease per waiting caller, leases granted through the etcd3 npm client: `Lock` waits inside etcd, in revision order, then `Unlock` deletes the ownership key. Each is a Raft proposal written and fsynced before the answer.",
  pg_advisory:
    "PostgreSQL 15 advisory locks in database `test` via node-postgres, a pool of 64 connections: a pooled connection runs `pg_advisory_lock(class, key)` then `pg_advisory_unlock(class, key)`. The blocking form rather than `pg_try_advisory_lock`: it waits in PostgreSQL's lock queue as leasehold's `lock` waits in its own, where the try form would need a polling loop.",
  pg_row:
    "PostgreSQL row locks, the way the seed systems lock: on a pooled connection `BEGIN`, `SELECT id FROM leasehold_bench_lock WHERE id = $1 FOR UPDATE`, `COMMIT` (three round-trips; the lock lasts as long as the transaction).",
};

function workloadEntries(peer: string, what: string): Record<string, FigureInfo> {
  return {
    [`peer_pairs_per_s_c64_${peer}`]: {
      section: PEERS_SECTION,
      meaning: `Lock+unlock pairs per second from 64 concurrent callers, each cycling over 4 keys of its own (nothing contended); median of rounds that rotate over all peers in one run. ${what}`,
    },
    [`peer_pairs_per_s_contended_${peer}`]: {
      section: PEERS_SECTION,
      meaning: `The same with 64 callers on 8 shared keys (8 callers per key at a time): most grants wait for a release. Measured as peer_pairs_per_s_c64_${peer}.`,
    },
    [`peer_wait_p50_us_contended_${peer}`]: {
      section: PEERS_SECTION,
      meaning: `Median wait per acquisition on the contended workload (64 callers on 8 shared keys), in µs: from the acquiring call (leasehold \`lock\`, redlock \`lock\` with its retries, etcd \`Lock\`, \`pg_advisory_lock\`, \`SELECT … FOR UPDATE\` after \`BEGIN\`) to its grant, every acquisition of every timed round. Measured as peer_pairs_per_s_contended_${peer}.`,
    },
    [`peer_wait_p99_us_contended_${peer}`]: {
      section: PEERS_SECTION,
      meaning: `99th percentile of the same wait: what an unlucky caller waits. A first-in-first-out queue bounds it near (callers per key) × (hold time + hand-off); a lock without a queue leaves it to who retries first.`,
    },
    [`peer_wait_max_us_contended_${peer}`]: {
      section: PEERS_SECTION,
      meaning: `The longest single wait in the timed rounds (one sample: noisy, but starvation shows here first).`,
    },
    [`peer_busiest_over_least_contended_${peer}`]: {
      section: PEERS_SECTION,
      meaning: `Starvation on the contended workload: in each round, the pairs completed by the busiest of the 64 callers divided by those of the least busy one (1 when the grants went round evenly; a caller that completed none counts as one pair, so the figure is then the busiest caller's count); median over the rounds, each round's ratio and counts in the note.`,
      ...(peer.startsWith("leasehold") && peer !== "leasehold_unbatched" ? { target: { op: "<=", value: 2 } } : {}),
    },
    [`peer_pair_p50_us_c1_${peer}`]: {
      section: PEERS_SECTION,
      meaning: `Median duration of one lock+unlock pair from a single caller cycling over 4 keys, in µs (for leasehold_async and leasehold_unbatched the pair ends when \`tryUnlock\` returns). Measured as peer_pairs_per_s_c64_${peer}.`,
    },
    [`peer_pair_p99_us_c1_${peer}`]: {
      section: PEERS_SECTION,
      meaning: `99th percentile of the same: the tail, where GC pauses and a busy 2-core machine show.`,
    },
  };
}

/** Catalog entries of the `peers` suite, spread into `CATALOG`. */
export const PEERS_CATALOG: Readonly<Record<string, FigureInfo>> = {
  ...Object.fromEntries(Object.entries(PEERS).flatMap(([peer, what]) => Object.entries(workloadEntries(peer, what)))),
  peer_ratio_leasehold_over_redlock_c64: {
    section: PEERS_SECTION,
    meaning:
      "peer_pairs_per_s_c64_leasehold_async divided by peer_pairs_per_s_c64_redlock, from the same run. Issue 6's target is 3. leasehold_async batches its locks (`lockBatching: true`): concurrent `lock` calls share one HTTP request, where redlock's are a few dozen bytes of RESP each, pipelined on one socket to Redis.",
    target: { op: ">=", value: 3 },
  },
  peer_ratio_leasehold_sync_over_redlock_c64: {
    section: PEERS_SECTION,
    meaning:
      "peer_pairs_per_s_c64_leasehold_sync divided by peer_pairs_per_s_c64_redlock, from the same run: lock + awaited `unlock` against redlock's lock + awaited release. Issue 13's target is 1.5. Concurrent awaited unlocks of one client coalesce into one `unlock` call at a time, sharing the unlocker's single flight with `tryUnlock`; before that, each awaited unlock was its own request and this ratio was about 0.7 (13,000 against 18,000 pairs/s).",
    target: { op: ">=", value: 1.5 },
  },
  peer_ratio_wait_p99_leasehold_over_redlock_contended: {
    section: PEERS_SECTION,
    meaning:
      "peer_wait_p99_us_contended_leasehold_async divided by peer_wait_p99_us_contended_redlock, from the same run. Issue 23's target is 0.5: a first-in-first-out lock's advantage under contention is the wait, not the rate, since redlock (no queue, a retry every 10 ms ± 5 ms) lets whichever caller retries first after a release take the key while others keep missing.",
    target: { op: "<=", value: 0.5 },
  },
  peer_ratio_leasehold_over_pg_advisory_c64: {
    section: PEERS_SECTION,
    meaning:
      "peer_pairs_per_s_c64_leasehold_async divided by peer_pairs_per_s_c64_pg_advisory, from the same run. Issue 6's target is 3; leasehold_async batches its locks (`lockBatching: true`).",
    target: { op: ">=", value: 3 },
  },
};
