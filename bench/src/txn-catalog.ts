import type { FigureInfo } from "./catalog.js";

const COMMIT = "Transactions: commit latency, sync against async unlock";
const TIMESTAMPS = "Timestamps";

const HOW =
  "`pnpm bench txn` runs N workers, each doing read-modify-write transactions of `@leasehold/txn` on a row of its own (so nothing conflicts), against the CLI lock server in a child process over loopback HTTP. Commit latency is timed from the end of the transaction body (the moment it asks to commit) to `run()` resolving. The commit is the same in both modes — lock the row and the transaction's own row, write-write check, write, commit timestamp, lease check, `putUnlessExists` — except the release: `sync` awaits two `unlock` calls (commit locks, then the immutable-timestamp lock, as AtlasDB did before ADR 15), `async` calls `tryUnlock` once and returns. Each mode has its own client; rounds alternate between the modes (and the order alternates) so load from elsewhere hits both alike.";

function commitEntries(n: number, context: string): Record<string, FigureInfo> {
  return {
    [`commit_p50_ms_sync_c${n}`]: { section: COMMIT, meaning: `Median commit latency with synchronous unlock at ${n} concurrent transaction${n > 1 ? "s" : ""}. ${n === 1 ? HOW : "Measured as for c1."}` },
    [`commit_p50_ms_async_c${n}`]: { section: COMMIT, meaning: `Median commit latency with asynchronous unlock (\`tryUnlock\`, the default) at ${n} concurrent, in the same run. ${context}` },
    [`commit_p99_ms_sync_c${n}`]: { section: COMMIT, meaning: `99th percentile of the synchronous commit latency at ${n} concurrent: the tail, where GC pauses and a busy 2-core machine show.` },
    [`commit_p99_ms_async_c${n}`]: { section: COMMIT, meaning: `99th percentile of the asynchronous commit latency at ${n} concurrent.` },
    [`commit_p50_ratio_async_over_sync_c${n}`]: {
      section: COMMIT,
      meaning: `Median async commit latency divided by median sync commit latency at ${n} concurrent, from the same interleaved run: the share of the commit a user still waits for when unlocking leaves the commit path. Below 1 means async is faster.`,
      ...(n === 1 ? { target: { op: "<=", value: 0.6 } as const } : {}),
    },
    [`unlock_calls_per_txn_sync_c${n}`]: {
      section: COMMIT,
      meaning: `Unlock calls the lock server received per committed transaction with synchronous unlock at ${n} concurrent, counted by a wrapper around the client's transport (the client's own \`stats()\` sees only batched unlocks). Always 2: one for the commit locks, one for the immutable-timestamp lock.`,
    },
    [`unlock_calls_per_txn_async_c${n}`]: {
      section: COMMIT,
      meaning: `The same with asynchronous unlock, counted until \`close()\` has flushed the last batch. ${
        n === 1
          ? "Alone, every commit's two tokens go in one call (one `tryUnlock`), so 1: already half the sync count."
          : `Tokens that arrive while an unlock call is in flight share the next call, so with ${n} committers the count falls well below 1: the lock server's unlock load stops growing with the commit rate.`
      }`,
      ...(n === 64 ? { target: { op: "<=", value: 0.2 } as const } : {}),
    },
  };
}

/** Catalog entries of the `txn` suite, spread into `CATALOG`. */
export const TXN_CATALOG: Readonly<Record<string, FigureInfo>> = {
  ...commitEntries(
    1,
    "Async saves the two unlock round-trips, so expect roughly half the sync latency: what remains is the lock and commit-timestamp round-trips.",
  ),
  ...commitEntries(
    8,
    "With 8 committers, transaction starts and commit timestamps are already batched; async also removes 16 unlock calls per wave from the server's queue, so the other calls get through faster too.",
  ),
  ...commitEntries(
    64,
    "With 64 committers the lock server is the bottleneck; sync adds 128 unlock calls per wave that every other call queues behind, so async saves more than the two round-trips.",
  ),
  lock_hold_extension_ms_async_c1: {
    section: COMMIT,
    meaning:
      "How much longer a row's commit locks stay held with asynchronous unlock: the price other writers of the same row pay. Each sample commits one transaction on a row while a waiter (another client) is queued for that row's lock; the waiter's grant marks the server releasing it. Measured from the commit point (the transactions-table entry written), which both modes reach after identical work — not from `run()` returning, since sync returns only after releasing — as the median in async minus the median in sync, samples alternating between the modes. In sync the commit locks go in the first awaited call; in async `tryUnlock` sends them at once when no unlock call is in flight, as here, so the extension is near zero. The ADR's 'about half a round-trip' is the average under load, when a token waits for the unlock call in flight to return. For most users this is far below what async saves every committer.",
  },
  timestamps_per_s_c1: {
    section: TIMESTAMPS,
    meaning:
      "Fresh timestamps per second from one caller awaiting `LockClient.freshTimestamp()` in a loop over loopback HTTP: one round-trip each, so this is 1 / round-trip time. Each value is checked to be above the caller's previous one.",
  },
  timestamps_per_s_c32: {
    section: TIMESTAMPS,
    meaning:
      "The same with 32 concurrent callers on one client: the autobatcher sends one `timestamps` call at a time for everyone waiting, so the rate grows with callers while the server sees about the same number of calls.",
  },
  timestamps_per_s_c256: {
    section: TIMESTAMPS,
    meaning:
      "The same with 256 concurrent callers: each call hands out a range for up to 256 waiters. This is why a transaction's start and commit timestamps cost little under load, in both unlock modes.",
    target: { op: ">=", value: 50_000 },
  },
};
