import type { LockClient } from "@leasehold/client";
import type { KeyValueStore, Version } from "./key-value-store.js";
import { TransactionsTable, type WriterStatus } from "./transactions-table.js";

/** Options of {@link Sweeper}. */
export interface SweeperOptions {
  /** Asked for the immutable timestamp before each sweep. */
  readonly client: LockClient;
  /** The store the transactions write to. */
  readonly store: KeyValueStore;
  /** The tables to sweep (usually every table the `TransactionManager` declares). */
  readonly tables: readonly string[];
}

/** What one {@link Sweeper.sweep} did. */
export interface SweepResult {
  /** The immutable timestamp it swept below. */
  readonly sweepTimestamp: number;
  /** Cells looked at. */
  readonly cellsExamined: number;
  /** Versions removed. */
  readonly versionsDeleted: number;
  /** Writers it found unfinished below the sweep timestamp and rolled back. */
  readonly writersRolledBack: number;
}

/**
 * Removes versions that no running or future transaction can read. Every running transaction
 * holds an immutable-timestamp lock at its start timestamp, so the namespace's immutable
 * timestamp `i` is at most every running start, and every future start is above it. Of the
 * versions committed before `i`, such a reader sees the newest at most: the older ones, and every
 * aborted version written before `i`, can go; so can the newest if it is a delete. A leaked
 * transaction (never finished) holds `i` down only until its lease lapses on the server; a writer
 * found unfinished below `i` lost its lease, and is rolled back so it can never commit.
 */
export class Sweeper {
  readonly #options: SweeperOptions;
  readonly #transactions: TransactionsTable;

  constructor(options: SweeperOptions) {
    this.#options = options;
    this.#transactions = new TransactionsTable(options.store);
  }

  /** Sweep every table once. */
  async sweep(): Promise<SweepResult> {
    const { client, store, tables } = this.#options;
    const sweepTimestamp = await client.immutableTimestamp();
    let cellsExamined = 0;
    let versionsDeleted = 0;
    let writersRolledBack = 0;
    for (const table of tables) {
      for (const cell of await store.cells(table)) {
        cellsExamined++;
        const { doomed, rolledBack } = await this.#doomed(await store.versions(table, cell), sweepTimestamp);
        writersRolledBack += rolledBack;
        if (doomed.length === 0) continue;
        await store.deleteVersions(table, cell, doomed);
        versionsDeleted += doomed.length;
      }
    }
    return { sweepTimestamp, cellsExamined, versionsDeleted, writersRolledBack };
  }

  /**
   * Which versions of one cell (given oldest first) may go. A reader walks versions from the
   * newest start timestamp down and takes the first committed before its read timestamp, so of
   * the versions committed before the sweep timestamp only the one with the newest start can still
   * be read.
   */
  async #doomed(versions: readonly Version[], sweepTimestamp: number): Promise<{ doomed: number[]; rolledBack: number }> {
    const doomed = new Set<number>();
    let rolledBack = 0;
    let newestVisible: Version | undefined;
    for (const version of versions) {
      if (version.timestamp >= sweepTimestamp) break; // its writer may still be running
      let status: WriterStatus = await this.#transactions.status(version.timestamp);
      if (status.state === "unknown") {
        status = await this.#transactions.rollBack(version.timestamp);
        if (status.state === "aborted") rolledBack++;
      }
      if (status.state === "aborted") doomed.add(version.timestamp);
      else if (status.state === "committed" && status.commitTimestamp < sweepTimestamp) {
        if (newestVisible !== undefined) doomed.add(newestVisible.timestamp);
        newestVisible = version;
      }
    }
    // A delete hides what is below it; it may go only when nothing below it is left to uncover.
    if (newestVisible?.value === null && versions.every((v) => v.timestamp >= newestVisible.timestamp || doomed.has(v.timestamp))) {
      doomed.add(newestVisible.timestamp);
    }
    return { doomed: [...doomed], rolledBack };
  }
}
