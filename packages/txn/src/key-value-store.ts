/** One cell of a table: a row and a column. */
export interface Cell {
  readonly row: string;
  readonly column: string;
}

/** One version of a cell: the start timestamp of the transaction that wrote it, and its value. */
export interface Version {
  /** The writer's start timestamp (its commit timestamp lives in the transactions table). */
  readonly timestamp: number;
  /** The value, or `null` for a delete (a tombstone: it hides older versions). */
  readonly value: string | null;
}

/**
 * A versioned key-value store, the storage under transactions (AtlasDB's `KeyValueService`).
 * Every write is a new version at the writer's start timestamp; whether a version is visible is
 * decided by the transactions table, not by the store. Methods are async so a store on a real
 * database fits the same interface; the store needs no transactions of its own, only an atomic
 * `putUnlessExists`.
 */
export interface KeyValueStore {
  /** The newest version of `cell` with `timestamp < before`, or undefined. */
  latestBefore(table: string, cell: Cell, before: number): Promise<Version | undefined>;
  /** Write (or overwrite) the version of `cell` at `timestamp`. */
  put(table: string, cell: Cell, timestamp: number, value: string | null): Promise<void>;
  /**
   * Write an unversioned value only if `cell` has none; resolves true if this call wrote it.
   * Atomic: of concurrent calls on one cell exactly one wins. The transactions table relies on it.
   */
  putUnlessExists(table: string, cell: Cell, value: string): Promise<boolean>;
  /** The unversioned value of `cell` written by `putUnlessExists`, or undefined. */
  getUnversioned(table: string, cell: Cell): Promise<string | undefined>;
  /** Every cell of `table` that has at least one version (for sweep). */
  cells(table: string): Promise<Cell[]>;
  /** Every version of `cell`, oldest first (for sweep). */
  versions(table: string, cell: Cell): Promise<Version[]>;
  /** Remove the versions of `cell` at `timestamps`; missing ones are ignored. */
  deleteVersions(table: string, cell: Cell, timestamps: readonly number[]): Promise<void>;
}
