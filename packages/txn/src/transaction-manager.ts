import type { LockClient } from "@leasehold/client";
import { onAbort } from "@leasehold/protocol";
import { commitTransaction, type CommitDeps } from "./commit.js";
import { isConflictHandler, type ConflictHandler } from "./conflict-handler.js";
import type { KeyValueStore } from "./key-value-store.js";
import { SnapshotReader } from "./snapshot-reader.js";
import { Transaction } from "./transaction.js";
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
    const started = await this.#client.startTransaction(signal === undefined ? {} : { signal });
    const txn = new Transaction(started.startTimestamp, this.#reader, this.#tables);
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
}

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
