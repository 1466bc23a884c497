import { CLUSTER_CATALOG, CLUSTER_INTRO, CLUSTER_SECTION } from "./cluster-catalog.js";
import { PEERS_CATALOG, PEERS_SECTION } from "./peers-catalog.js";
import { TXN_CATALOG } from "./txn-catalog.js";

/** What a figure means, and the target an issue set for it, for the generated docs. */
export interface FigureInfo {
  readonly section: string;
  readonly meaning: string;
  readonly target?: { readonly op: ">=" | "<="; readonly value: number };
}

/** Every figure the benchmarks produce, by name. Unknown names are still reported, under "Other". */
export const CATALOG: Readonly<Record<string, FigureInfo>> = {
  engine_pairs_per_s_uncontended: {
    section: "Lock engine (in process)",
    meaning:
      "Exclusive lock+unlock pairs per second driving the engine directly in one process, each grant doing everything a real one does: a token from the random pool, a lease entry, a fencing token from the namespace counter, metrics counters. Measures the lock table's own cost with no I/O.",
    target: { op: ">=", value: 1_000_000 },
  },
  engine_pairs_per_s_contended: {
    section: "Lock engine (in process)",
    meaning:
      "64 requesters cycling on 8 exclusive descriptors in one process: most requests queue, and every release hands the lock to the next waiter in FIFO order. Shows the queueing path's cost.",
  },
  memory_bytes_per_held_lock: {
    section: "Lock engine (in process)",
    meaning:
      "Heap bytes per held lock with 1,000,000 single-descriptor locks held at once (heap after a forced GC, minus the heap before, divided by the count). Includes the token, the lease-queue entry, the descriptor's state and the idempotency-free token record.",
    target: { op: "<=", value: 1024 },
  },
  engine_pairs_per_s_100k_held: {
    section: "Lock engine (in process)",
    meaning: "Exclusive lock+unlock throughput on 1,024 hot keys while 100,000 other locks are held. Lower than the uncontended figure: the tables no longer fit in the CPU caches and the collector has a large old generation to watch.",
  },
  engine_pairs_per_s_1m_held: {
    section: "Lock engine (in process)",
    meaning: "The same with 1,000,000 other locks held.",
  },
  engine_pairs_ratio_1m_over_100k_held: {
    section: "Lock engine (in process)",
    meaning:
      "Grant and release cost must not grow with the lock table: ten times as many held locks should leave throughput about the same (O(1) per operation), where work proportional to what is held would divide it by ten. The first version of this benchmark found a twentyfold slowdown: V8's Map keeps deleted entries in their hash chain until the table is rebuilt, so a hot descriptor dropped and re-added next to a million held locks walked thousands of dead entries. Idle descriptors now stay in the map for a bounded window (`NamespaceState.retire`).",
  },
  http_pairs_per_s_c64: {
    section: "HTTP server",
    meaning:
      "lock then unlock pairs per second from 64 keep-alive connections in the benchmark process to the CLI server in a child process over loopback. Each pair is two HTTP requests, so the request rate is twice this.",
    target: { op: ">=", value: 10_000 },
  },
  tryunlock_ns_p50: {
    section: "Client",
    meaning:
      "What one `tryUnlock` call costs its caller (median), timed around the synchronous call on a client over HTTP while the background flusher runs. This is what a commit pays to release its locks.",
  },
  tryunlock_ns_p99: {
    section: "Client",
    meaning: "The 99th percentile of the same: the occasional call that also allocates a new pending set or schedules the flush.",
  },
  unlock_calls_per_1000_tokens_c1: {
    section: "Client",
    meaning:
      "Unlock calls the client sent per 1,000 tokens given to `tryUnlock`, with one committer doing lock then tryUnlock over HTTP. Alone, nearly every token goes in its own call (nothing to batch with), so expect close to 1,000.",
  },
  unlock_calls_per_1000_tokens_c8: {
    section: "Client",
    meaning: "The same with 8 concurrent committers on one client: tokens that arrive while a call is in flight share the next one.",
  },
  unlock_calls_per_1000_tokens_c64: {
    section: "Client",
    meaning: "The same with 64 concurrent committers: the batch size grows with load, so unlock calls stop scaling with commits.",
  },
  http_lock_tryunlock_pairs_per_s_c64: {
    section: "Client",
    meaning:
      "lock then tryUnlock pairs per second from 64 concurrent callers sharing one LockClient, to the CLI server in a child process over loopback, with the client's defaults. Locks travel in `lock-batch` calls (lock batching is on by default over HTTP) and unlocks in batched `unlock` calls, so 64 pairs cost about three requests; before lock batching each pair cost about one request and this figure was near 18,000.",
    target: { op: ">=", value: 15_000 },
  },
  ...TXN_CATALOG,
  ...PEERS_CATALOG,
  ...CLUSTER_CATALOG,
};

/** A paragraph shown under a section's heading: what the figures mean together. */
export const SECTION_INTROS: Readonly<Record<string, string>> = {
  [CLUSTER_SECTION]: CLUSTER_INTRO,
  [PEERS_SECTION]:
    "**Where the peers win, and why.** `pnpm bench peers` runs every peer in one process tree on this shared 2-core machine, rounds rotating between them, so the ratios are fairer than the absolute numbers. This virtual machine has two speeds: in quiet spells a redlock round does about 90,000 pairs/s at 64 callers and one caller's pair takes 26–29 µs; when the host is busy, redlock drops to 50,000–65,000 and a lone pair to about 50 µs. The run above started quiet and turned busy during the c64 rounds (redlock's rounds fell from 83,143 to 59,804), so its absolute figures mix both. **64 callers on keys of their own: leasehold_async leads**, at 4.2 times redlock in the run above (280,986 against 66,841 pairs/s); in this session's side-by-side trials and the previous full run, all in quiet spells, the ratio was 3.4–3.6 (the previous full run: 316,777 against 97,336, 3.25, before the last client changes). It is 10 times PostgreSQL advisory locks. What gets it there is lock batching: 64 concurrent `lock` calls leave as two `lock-batch` requests of 32, come back as compact NDJSON lines (a grant is its token and fencing token, about 60 bytes; ADR 0005), and their unlocks go as one `unlock` call, so the client process, which is the bottleneck (see Profiles), pays for 3 HTTP exchanges per 64 pairs instead of 128. leasehold_unbatched, the same calls with one request per `lock`, does about a sixth of that. **leasehold_sync is the slowest leasehold**: each caller awaits its own `unlock`, and `unlock` is one HTTP request per call (only `tryUnlock` batches), so it is bound by 64 single requests in flight like leasehold_unbatched, plus a second round-trip per pair. **Contended (64 callers on 8 keys), leasehold and redlock are close**: leasehold_async did 53,251 against redlock's 40,692 in the run above and 70,772 against 70,040 in the previous one. redlock has no queue and no fairness (whichever caller retries first after a release takes the key), while leasehold hands each release to the next waiter in FIFO order, which costs a wake-up and a line to a different caller per grant. **One caller: the latency target holds, by a wide margin when the host is busy and by a thin one when it is quiet.** In the run above leasehold_async's pair p50 was 36 µs against redlock's 52 µs; in quiet spells the margin is thin: three side-by-side trials of the final code (3 rounds of 1 s each) gave 25.9, 27.3 and 27.3 µs against redlock's 28.2, 27.8 and 29.7 µs, and the previous full run (before the last two client changes, a plain lock for a lone caller and `then` chains in the transport) 29 µs against 28 µs, a miss by one microsecond. A pair is one HTTP round trip for the lock plus an unlock request sent alongside the next lock; redlock's is two RESP round trips to a C server, each about 13 µs here, where an HTTP exchange through undici and node:http costs 17–25 µs, half of it the two processes' `writev` calls and wake-ups. redlock and advisory locks have the steadier tail (p99). What the throughput does not show is what leasehold adds: leases refreshed by the client with lost-lock notices, fencing tokens, FIFO waiting (redlock retries a taken key on a timer, here every 10 ms, with no fairness), shared locks, and batched unlocks.",
  "Transactions: commit latency, sync against async unlock":
    "**Choosing between sync and async unlock.** Async (`tryUnlock`, the default) takes the two unlock round-trips off every commit: at one committer the commit takes a bit over half as long, and under load the lock server also receives a small fraction of the unlock calls, which shortens everyone's other calls. The price is that a commit's locks are released a moment after the commit returns (`lock_hold_extension_ms_async_c1`: a fraction of a millisecond here), and that a failed unlock is only logged and left to lapse with its lease. Choose sync only when code must know the locks are gone before it continues (a test, or a hand-off to a waiter you are about to signal); for a transaction commit, whose writes are already durable and whose conflicts are checked against the commit record, async is the right default.",
};

/** True, false, or undefined when the figure has no target. */
export function meetsTarget(name: string, value: number): boolean | undefined {
  const target = CATALOG[name]?.target;
  if (!target) return undefined;
  return target.op === ">=" ? value >= target.value : value <= target.value;
}
