import type { FigureInfo } from "./catalog.js";

const CACHE = "Transactions: read cache over PostgreSQL (lock watches)";
const HOW =
  "`pnpm bench txn` runs 64 workers of `@leasehold/txn` over a `PostgresKeyValueStore` (local PostgreSQL) against the CLI lock server (2 s leases) in a child process: each transaction reads 4 random rows of a hot set of 1,000, and 10% of them also write one (`retry-on-write-write`, so each write's commit lock is the lock event that invalidates cached copies). The same workload runs without and then with `readCache`, each after a warm-up (the cache is cold for a lease after it first sees a lock table).";

/** Catalog entries of the read cache and lock-event figures (issue 22), spread into `CATALOG`. */
export const READ_CACHE_CATALOG: Readonly<Record<string, FigureInfo>> = {
  txn_read_cache_hit_rate: { section: CACHE, meaning: `Share of reads answered from the cache. ${HOW}`, target: { op: ">=", value: 0.9 } },
  txn_read_heavy_per_s_no_cache: { section: CACHE, meaning: "Committed transactions per second without the cache: every read is a PostgreSQL statement (or two, when the transactions-table entry is not yet cached)." },
  txn_read_heavy_per_s_cache: { section: CACHE, meaning: "Committed transactions per second with the cache, same workload and store." },
  txn_read_heavy_ratio_cache_over_no_cache: { section: CACHE, meaning: "With the cache over without: what answering hot reads from memory saves per transaction.", target: { op: ">=", value: 3 } },
  txn_read_p50_us_no_cache: { section: CACHE, meaning: "Median latency of one `txn.get` without the cache (a PostgreSQL round-trip, under the load of 64 workers)." },
  txn_read_p50_us_cache: { section: CACHE, meaning: "Median latency of one `txn.get` with the cache (a hit is a map lookup and two descriptor checks)." },
  txn_read_p50_ratio_no_cache_over_cache: { section: CACHE, meaning: "Median read without the cache over with it.", target: { op: ">=", value: 10 } },
  lock_events_pairs_per_s_unwatched_c64: {
    section: CACHE,
    meaning: "lock+tryUnlock pairs/s of 64 callers on one LockClient to the CLI server, in a namespace nobody watches: the lock path pays one null check for lock watches.",
  },
  lock_events_pairs_per_s_all_watched_c64: {
    section: CACHE,
    meaning: "The same in a namespace watched with `\"\"` (every descriptor), with a `watchLocks` follower reading every event: each grant and each release appends an event.",
  },
  lock_events_overhead_all_watched_c64: {
    section: CACHE,
    meaning: "1 − watched / unwatched, rounds alternating between the two namespaces of one server: the share of lock+tryUnlock throughput that logging every lock and unlock costs.",
    target: { op: "<=", value: 0.1 },
  },
};
