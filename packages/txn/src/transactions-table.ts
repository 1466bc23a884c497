import { rowLock } from "@leasehold/protocol";
import type { Cell, KeyValueStore } from "./key-value-store.js";

/** Name of the table that maps each transaction's start timestamp to its commit timestamp. */
export const TRANSACTIONS_TABLE = "_transactions";

/** The status of a writer, as the transactions table tells it. */
export type WriterStatus = { readonly state: "committed"; readonly commitTimestamp: number } | { readonly state: "aborted" } | { readonly state: "unknown" };

const ABORTED = "aborted";
const UNKNOWN: WriterStatus = { state: "unknown" };
const ABORTED_STATUS: WriterStatus = { state: "aborted" };

function cellOf(startTimestamp: number): Cell {
  return { row: String(startTimestamp), column: "t" };
}

/** The lock descriptor of a transaction's own row: held by the writer for its whole commit. */
export function transactionRowLock(startTimestamp: number): string {
  return rowLock(TRANSACTIONS_TABLE, String(startTimestamp));
}

/**
 * The transactions table over a store. An entry is written once, with `putUnlessExists`, either
 * by the writer (its commit timestamp: the commit point) or by someone rolling it back
 * (`aborted`); whoever writes first decides. Entries never change after that, so they are cached.
 */
export class TransactionsTable {
  readonly #store: KeyValueStore;
  readonly #cache = new Map<number, WriterStatus>();

  constructor(store: KeyValueStore) {
    this.#store = store;
  }

  /** The status of the writer that started at `startTimestamp`. */
  async status(startTimestamp: number): Promise<WriterStatus> {
    const cached = this.#cache.get(startTimestamp);
    if (cached !== undefined) return cached;
    const raw = await this.#store.getUnversioned(TRANSACTIONS_TABLE, cellOf(startTimestamp));
    if (raw === undefined) return UNKNOWN;
    const status: WriterStatus = raw === ABORTED ? ABORTED_STATUS : { state: "committed", commitTimestamp: Number(raw) };
    this.#remember(startTimestamp, status);
    return status;
  }

  /** The commit point: true if `startTimestamp` is now committed at `commitTimestamp`. */
  async commit(startTimestamp: number, commitTimestamp: number): Promise<boolean> {
    const won = await this.#store.putUnlessExists(TRANSACTIONS_TABLE, cellOf(startTimestamp), String(commitTimestamp));
    if (won) this.#remember(startTimestamp, { state: "committed", commitTimestamp });
    return won;
  }

  /** Roll back the writer at `startTimestamp` unless it committed first; resolves its final status. */
  async rollBack(startTimestamp: number): Promise<WriterStatus> {
    if (await this.#store.putUnlessExists(TRANSACTIONS_TABLE, cellOf(startTimestamp), ABORTED)) {
      this.#remember(startTimestamp, ABORTED_STATUS);
      return ABORTED_STATUS;
    }
    return this.status(startTimestamp);
  }

  #remember(startTimestamp: number, status: WriterStatus): void {
    // Bounded: a long-lived process must not keep every transaction it ever saw.
    if (this.#cache.size >= 100_000) this.#cache.clear();
    this.#cache.set(startTimestamp, status);
  }
}
