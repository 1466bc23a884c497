import type { LockClient } from "@leasehold/client";
import type { Cell, KeyValueStore, Version } from "./key-value-store.js";
import { TransactionLockTimeoutError } from "./transaction-errors.js";
import { transactionRowLock, type TransactionsTable, type WriterStatus } from "./transactions-table.js";

/** What a {@link SnapshotReader} reads through. */
export interface SnapshotReaderDeps {
  readonly client: LockClient;
  readonly store: KeyValueStore;
  readonly transactions: TransactionsTable;
  /** How long to wait for a writer that is still committing a version we must judge. */
  readonly lockAcquireTimeoutMs: number;
}

/** How to treat a version whose writer has neither committed nor been rolled back. */
export type UnknownWriterPolicy =
  /** Wait for the writer's own row lock (it holds it for its whole commit) with `waitForLocks`, then roll it back if it left no entry. */
  | "wait"
  /**
   * Answer it at once without waiting: the serializable re-read uses this, because two committers
   * re-reading each other's cells while holding their own row locks would wait on each other.
   */
  | "report";

/** The answer of a visibility read: the visible version, or the unknown writer that blocked it. */
export type VisibleRead = { readonly version: Version | undefined } | { readonly unknownWriter: number };

/**
 * Decides which version of a cell a reader at timestamp `t` sees: the newest version whose writer
 * committed before `t`. Versions of writers that are still committing are resolved the AtlasDB
 * way: wait (`waitForLocks`, acquiring nothing) until the writer releases the lock on its own row
 * of the transactions table, then, if it left no entry, roll it back (`putUnlessExists(start → aborted)`) so it can never commit
 * a value that a reader already judged absent.
 */
export class SnapshotReader {
  readonly #deps: SnapshotReaderDeps;

  constructor(deps: SnapshotReaderDeps) {
    this.#deps = deps;
  }

  /**
   * The version of `cell` a transaction reading at `readTimestamp` sees. `skipWriter` (a start
   * timestamp) hides one writer's own versions, for re-reads at commit time.
   */
  async visible(table: string, cell: Cell, readTimestamp: number, policy: UnknownWriterPolicy, skipWriter?: number): Promise<VisibleRead> {
    let before = readTimestamp;
    for (;;) {
      const version = await this.#deps.store.latestBefore(table, cell, before);
      if (version === undefined) return { version: undefined };
      before = version.timestamp;
      if (version.timestamp === skipWriter) continue;
      const status = await this.status(version.timestamp, policy);
      if (status.state === "unknown") return { unknownWriter: version.timestamp };
      if (status.state === "committed" && status.commitTimestamp < readTimestamp) return { version };
    }
  }

  /** The writer's status; with `wait`, never `unknown` (it waits, then rolls back). */
  async status(writer: number, policy: UnknownWriterPolicy): Promise<WriterStatus> {
    const { transactions, client, lockAcquireTimeoutMs } = this.#deps;
    const status = await transactions.status(writer);
    if (status.state !== "unknown" || policy === "report") return status;
    // AtlasDB's commit-timestamp loader: wait for the writer's commit lock without taking it, so
    // the reader neither aborts a writer that is still committing nor spins, and holds nothing
    // that would delay the writers queued behind it.
    const waited = await client.waitForLocks([{ descriptor: transactionRowLock(writer), mode: "exclusive" }], { acquireTimeoutMs: lockAcquireTimeoutMs });
    if (waited.status !== "free") {
      throw new TransactionLockTimeoutError(
        `a value's writer (started at ${writer}) still held its commit lock after ${lockAcquireTimeoutMs} ms (lockAcquireTimeoutMs): it may still be committing, so its value can be neither read nor skipped; try again`,
      );
    }
    // The writer has finished or died (it takes its commit lock before it writes a version, and
    // holds it until after its commit point); if it left no entry it never will commit.
    return transactions.rollBack(writer);
  }
}
