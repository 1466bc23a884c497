import type { ConflictHandler } from "./conflict-handler.js";
import type { Cell, Version } from "./key-value-store.js";
import { ReadCacheValidationError, type CacheView, type ReadCache } from "./read-cache.js";
import type { SnapshotReader } from "./snapshot-reader.js";
import { TRANSACTIONS_TABLE } from "./transactions-table.js";

/** A buffered write: a value, or `null` for a delete. */
export interface BufferedWrite {
  readonly table: string;
  readonly cell: Cell;
  readonly value: string | null;
}

/** A snapshot read, remembered for the serializable check: which version was seen (0 for none). */
export interface RecordedRead {
  readonly table: string;
  readonly cell: Cell;
  readonly seen: number;
}

function key(table: string, row: string, column: string): string {
  return JSON.stringify([table, row, column]);
}

/**
 * One attempt of a transaction, handed to the function given to `TransactionManager.run`. Reads
 * see the snapshot at `startTimestamp` (plus this transaction's own writes); writes are buffered
 * in memory and reach the store only at commit. To abort, throw: nothing is written.
 */
export class Transaction {
  /** The start timestamp: reads see what committed before it. */
  readonly startTimestamp: number;
  readonly #reader: SnapshotReader;
  readonly #tables: Readonly<Record<string, ConflictHandler>>;
  readonly #writes = new Map<string, BufferedWrite>();
  readonly #reads = new Map<string, RecordedRead>();
  #finished = false;
  readonly #cache: { readonly cache: ReadCache; readonly view: CacheView; readonly now: () => number } | null;

  /** @internal Created by `TransactionManager`; `cache` when it runs with a read cache. */
  constructor(
    startTimestamp: number,
    reader: SnapshotReader,
    tables: Readonly<Record<string, ConflictHandler>>,
    cache: { readonly cache: ReadCache; readonly view: CacheView; readonly now: () => number } | null = null,
  ) {
    this.startTimestamp = startTimestamp;
    this.#reader = reader;
    this.#tables = tables;
    this.#cache = cache;
  }

  /** The value of a cell in this transaction's view, or undefined when absent or deleted. */
  async get(table: string, row: string, column: string): Promise<string | undefined> {
    const handler = this.#check(table);
    const k = key(table, row, column);
    const own = this.#writes.get(k);
    if (own !== undefined) return own.value ?? undefined;
    const cell: Cell = { row, column };
    const version = await this.#read(table, cell);
    // Only serializable tables pay for remembering reads; the first read of a cell is the snapshot's.
    if (handler === "serializable" && !this.#reads.has(k)) this.#reads.set(k, { table, cell, seen: version?.timestamp ?? 0 });
    return version?.value ?? undefined;
  }

  /** The snapshot's version of a cell: from the read cache when it may answer, else from the store. */
  async #read(table: string, cell: Cell): Promise<Version | undefined> {
    const c = this.#cache;
    if (c !== null && c.cache.caches(table)) {
      const hit = c.cache.get(table, cell, c.view, c.now());
      if (hit !== undefined) {
        if (c.cache.shouldValidate()) {
          const stored = await this.#readStore(table, cell);
          if (stored?.timestamp !== hit.version?.timestamp || stored?.value !== hit.version?.value) {
            throw new ReadCacheValidationError(
              `read cache validation failed on ${table} (${cell.row}, ${cell.column}) at start timestamp ${this.startTimestamp}: the cache answered ${JSON.stringify(hit.version ?? null)}, the store ${JSON.stringify(stored ?? null)}`,
            );
          }
        }
        return hit.version;
      }
      const version = await this.#readStore(table, cell);
      c.cache.put(table, cell, version, c.view, c.now());
      return version;
    }
    return this.#readStore(table, cell);
  }

  async #readStore(table: string, cell: Cell): Promise<Version | undefined> {
    const read = await this.#reader.visible(table, cell, this.startTimestamp, "wait");
    if (!("version" in read)) throw new Error("a waiting read reported an unknown writer (a bug)");
    return read.version;
  }

  /** Buffer a write of `value` to a cell; it becomes visible to others only if the commit succeeds. */
  put(table: string, row: string, column: string, value: string): void {
    this.#buffer(table, row, column, value);
  }

  /** Buffer a delete of a cell (a tombstone version at commit). */
  delete(table: string, row: string, column: string): void {
    this.#buffer(table, row, column, null);
  }

  /** @internal The buffered writes, for the commit. */
  writes(): readonly BufferedWrite[] {
    return [...this.#writes.values()];
  }

  /** @internal Snapshot reads of serializable tables, for the read-write check. */
  reads(): readonly RecordedRead[] {
    return [...this.#reads.values()];
  }

  /** @internal The conflict handler of a declared table. */
  handler(table: string): ConflictHandler {
    return this.#lookup(table);
  }

  /** @internal Refuse further use once the attempt has ended (a leaked reference would write nothing). */
  finish(): void {
    this.#finished = true;
  }

  #buffer(table: string, row: string, column: string, value: string | null): void {
    this.#check(table);
    if (typeof row !== "string" || typeof column !== "string") throw new TypeError("row and column must be strings");
    this.#writes.set(key(table, row, column), { table, cell: { row, column }, value });
  }

  #check(table: string): ConflictHandler {
    if (this.#finished) throw new Error("this transaction has already committed or aborted; use the one run() passes to this attempt");
    return this.#lookup(table);
  }

  #lookup(table: string): ConflictHandler {
    if (table === TRANSACTIONS_TABLE) throw new Error(`${TRANSACTIONS_TABLE} is the transactions table and cannot be used directly`);
    // Own keys only: "toString" or "__proto__" must not pass for a table.
    const handler = Object.hasOwn(this.#tables, table) ? this.#tables[table] : undefined;
    if (handler === undefined) throw new Error(`unknown table "${table}": declare it with its conflict handler in TransactionManager's tables`);
    return handler;
  }
}
