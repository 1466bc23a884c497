import type { LockClient } from "@leasehold/client";
import { onAbort } from "@leasehold/protocol";
import { commitTransaction, type CommitDeps } from "./commit.js";
import { conflictPolicy, isConflictHandler, type ConflictHandler } from "./conflict-handler.js";
import type { KeyValueStore } from "./key-value-store.js";
import { SnapshotReader } from "./snapshot-reader.js";
import { Transaction } from "./transaction.js";
import { ReadCache, type ReadCacheOptions, type ReadCacheStats } from "./read-cache.js";
import { TransactionError } from "./transaction-errors.js";
import { TRANSACTIONS_TABLE, TransactionsTable } from "./transactions-table.js";
import type { UnlockMode } from "./unlock-mode.js";

/** Options of {@link TransactionManager}. */
export interface TransactionManagerOptions {
  /** The lock client: start timestamps, commit locks, commit timestamps, unlocks. Not closed by the manager. */
  readonly client: LockClient;
  /** Where versions and the transactions table live. */
  readonly store: KeyValueStore;
  /**
   * Every table transactions may use, with its conflict handler. Required: a table without a
   * declared handler would silently get no protection, so using one is an error.
   */
  readonly tables: Readonly<Record<string, ConflictHandler>>;
  /**
   * How a committed transaction releases its locks. Default `"async"` (`tryUnlock`: the commit
   * returns without waiting for any unlock answer). `"sync"` awaits two unlock calls and exists
   * only so benchmarks can measure the difference.
   */
  readonly unlockMode?: UnlockMode | undefined;
  /**
   * Default for {@link RunOptions.retries}. Default 3: conflicts are normal under contention and a
   * few retries absorb them, while an unbounded loop would hide a hot spot that needs redesign.
   */
  readonly retries?: number | undefined;
  /**
   * Longest wait for the commit locks, and for a writer that is still committing a value a read
   * must judge, in ms. Default 10,000: commit locks are held for a few round-trips, so a longer
   * wait means a stuck committer whose lease must lapse first.
   */
  readonly lockAcquireTimeoutMs?: number | undefined;
  /**
   * Base of the jittered exponential backoff between retries, in ms (attempt n waits a random
   * time up to `retryBackoffMs · 2^(n−1)`, capped at 64×). Default 2: enough to let the winner of a
   * conflict finish, small next to a commit.
   */
  readonly retryBackoffMs?: number | undefined;
  /**
   * A read cache validated by lock watches (see {@link ReadCacheOptions} and docs/transactions.md
   * "Read cache"). Default: none, every read goes to the store. With it, each transaction start also
   * brings the lock events before its start timestamp, and reads of the cached tables are answered
   * from memory while no commit lock touched the cell since it was read. Call {@link
   * TransactionManager.close} when done: the manager keeps a lock watch registered meanwhile.
   */
  readonly readCache?: ReadCacheOptions | undefined;
}

/** Options of one {@link TransactionManager.run}. */
export interface RunOptions {
  /** How many times a retriable failure (a `TransactionError`) is retried. Default: the manager's (3). */
  readonly retries?: number | undefined;
  /** Abandons starting the transaction and waiting between retries. Default: none. */
  readonly signal?: AbortSignal | undefined;
}

/**
 * Runs snapshot-isolation transactions over a {@link KeyValueStore}, with the lock client for
 * timestamps and locks: AtlasDB's transaction protocol, including its asynchronous unlock.
 */
export class TransactionManager {
  readonly #client: LockClient;
  readonly #tables: Readonly<Record<string, ConflictHandler>>;
  readonly #reader: SnapshotReader;
  readonly #commit: CommitDeps;
  readonly #retries: number;
  readonly #backoffMs: number;
  readonly #cache: ReadCache | null;
  readonly #now: () => number = () => performance.now();
  #watch: { unsubscribe(): void } | null = null;

  constructor(options: TransactionManagerOptions) {
    for (const [table, handler] of Object.entries(options.tables)) {
      if (table === TRANSACTIONS_TABLE) throw new Error(`${TRANSACTIONS_TABLE} is reserved for the transactions table`);
      if (!isConflictHandler(handler)) throw new Error(`table "${table}": unknown conflict handler ${JSON.stringify(handler)}`);
    }
    const lockAcquireTimeoutMs = options.lockAcquireTimeoutMs ?? 10_000;
    const transactions = new TransactionsTable(options.store);
    this.#client = options.client;
    this.#tables = { ...options.tables };
    this.#reader = new SnapshotReader({ client: options.client, store: options.store, transactions, lockAcquireTimeoutMs });
    this.#commit = {
      client: options.client,
      store: options.store,
      transactions,
      reader: this.#reader,
      unlockMode: options.unlockMode ?? "async",
      lockAcquireTimeoutMs,
    };
    this.#retries = options.retries ?? 3;
    this.#backoffMs = options.retryBackoffMs ?? 2;
    this.#cache = options.readCache === undefined ? null : new ReadCache(options.readCache);
    for (const table of options.readCache?.prefixes ?? []) {
      const handler = Object.hasOwn(this.#tables, table) ? this.#tables[table] : undefined;
      if (handler === undefined) throw new Error(`readCache: table "${table}" is not declared in tables`);
      if (conflictPolicy(handler).lock === "none") {
        throw new Error(`readCache: table "${table}" uses ${handler}, whose writers take no commit locks, so the cache could never learn of their writes`);
      }
    }
  }

  /** Counters of the read cache, or undefined without one. */
  readCacheStats(): ReadCacheStats | undefined {
    return this.#cache?.stats();
  }

  /** Stop the read cache's lock watch (a manager without a read cache has nothing to stop). Idempotent. */
  close(): void {
    this.#watch?.unsubscribe();
    this.#watch = null;
  }

  /**
   * Run `fn` in a transaction and commit what it wrote; resolves with `fn`'s result once
   * committed. A conflict or lost lock (a `TransactionError`) runs `fn` again in a new transaction,
   * up to `retries` times, then rethrows the last one; so `fn` may run more than once and should
   * have no effects outside the transaction. Anything else `fn` throws aborts the transaction
   * (nothing is written) and is rethrown without a retry. Locks of a failed attempt are released
   * with `tryUnlock`.
   */
  async run<T>(fn: (txn: Transaction) => Promise<T> | T, options: RunOptions = {}): Promise<T> {
    const retries = options.retries ?? this.#retries;
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.#attempt(fn, options.signal);
      } catch (err) {
        if (!(err instanceof TransactionError)) throw err;
        err.attempts = attempt;
        if (attempt > retries) throw err;
        await backoff(this.#backoffMs * 2 ** Math.min(attempt - 1, 6), options.signal);
      }
    }
  }

  async #attempt<T>(fn: (txn: Transaction) => Promise<T> | T, signal: AbortSignal | undefined): Promise<T> {
    const { started, txn } = await this.#start(signal);
    let result: T;
    try {
      result = await fn(txn);
    } catch (err) {
      txn.finish();
      this.#client.tryUnlock([started.token]);
      throw err;
    }
    txn.finish();
    await commitTransaction(this.#commit, txn, started.token);
    return result;
  }

  async #start(signal: AbortSignal | undefined): Promise<{ started: { readonly token: string }; txn: Transaction }> {
    const options = signal === undefined ? {} : { signal };
    const cache = this.#cache;
    if (cache === null) {
      const started = await this.#client.startTransaction(options);
      return { started, txn: new Transaction(started.startTimestamp, this.#reader, this.#tables) };
    }
    // The watch registers the cache's prefixes and keeps them registered; its updates help too.
    this.#watch ??= this.#client.watchLocks(cache.watchPrefixes).subscribe({
      // Never the first word on a new log: only a transaction start knows the lease to stay cold for.
      next: (update) => cache.apply(update, this.#now(), null),
      error: () => undefined, // the cache then stays cold: every read goes to the store
    });
    const watched = await this.#client.startWatchedTransaction(cache.since(), options);
    // A new log (a new lock table) stays cold for a lease: committers holding locks of the old table may still commit.
    cache.apply(watched.lockWatch, this.#now(), watched.lease.validForMs + COLD_MARGIN_MS);
    const view = { logId: watched.lockWatch.logId, version: watched.lockWatch.version };
    const txn = new Transaction(watched.transaction.startTimestamp, this.#reader, this.#tables, { cache, view, now: this.#now });
    return { started: watched.transaction, txn };
  }
}

/** How much longer than a lease the cache stays cold after a new log: a margin for clock rates and delays. */
const COLD_MARGIN_MS = 250;

function backoff(maxMs: number, signal: AbortSignal | undefined): Promise<void> {
  signal?.throwIfAborted();
  return new Promise((resolve, reject) => {
    // onAbort, not addEventListener: one signal may be shared by many transactions backing off.
    const off =
      signal === undefined
        ? undefined
        : onAbort(signal, () => {
            clearTimeout(timer);
            reject(signal.reason);
          });
    const timer = setTimeout(() => {
      off?.();
      resolve();
    }, Math.random() * maxMs);
  });
}
