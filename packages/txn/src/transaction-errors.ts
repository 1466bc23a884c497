import type { Cell } from "./key-value-store.js";

/** Stable codes of {@link TransactionError}s. */
export const TRANSACTION_ERROR_CODES = ["TRANSACTION_CONFLICT", "TRANSACTION_LOCKS_LOST", "TRANSACTION_LOCK_TIMEOUT"] as const;

/** One of {@link TRANSACTION_ERROR_CODES}. */
export type TransactionErrorCode = (typeof TRANSACTION_ERROR_CODES)[number];

/**
 * Base class of every error the transaction layer raises itself. Each one means the transaction
 * did **not** commit (nothing it wrote is visible) and is safe to run again: `run()` retries it up
 * to `retries` times, then rethrows the last one with `attempts` set.
 */
export class TransactionError extends Error {
  /** Stable code, for `switch`es and logs. */
  readonly code: TransactionErrorCode;
  /** How many times `run()` had tried when it gave up (1 when thrown by the first attempt). */
  attempts = 1;

  constructor(code: TransactionErrorCode, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }
}

/** Why a commit conflicted. */
export type ConflictKind = "write-write" | "read-write" | "rolled-back";

/**
 * Another transaction got in the way: it committed a write to a cell this one wrote
 * (`write-write`) or read (`read-write`, serializable tables only) after this one started, or a
 * reader or sweep rolled this transaction back while it was committing (`rolled-back`).
 */
export class TransactionConflictError extends TransactionError {
  /** Which check failed. */
  readonly kind: ConflictKind;
  /** The table of the first conflicting cell (empty for `rolled-back`). */
  readonly table: string;
  /** The first conflicting cell, if any. */
  readonly cell: Cell | undefined;

  constructor(kind: ConflictKind, table: string, cell: Cell | undefined, message: string) {
    super("TRANSACTION_CONFLICT", message);
    this.kind = kind;
    this.table = table;
    this.cell = cell;
  }
}

/**
 * The lease of the transaction's immutable-timestamp lock or of its commit locks ran out before
 * the commit point, so another writer or sweep may have acted as if the transaction were gone. The
 * commit stops before `putUnlessExists`: nothing was committed.
 */
export class TransactionLocksLostError extends TransactionError {
  constructor(message: string) {
    super("TRANSACTION_LOCKS_LOST", message);
  }
}

/**
 * A lock the transaction needed was not granted within `lockAcquireTimeoutMs`: its commit locks,
 * or, for a read, the commit lock of a writer still committing a value the read must judge did not
 * become free (`waitForLocks` answered `timeout`): the value can then be neither read nor skipped.
 */
export class TransactionLockTimeoutError extends TransactionError {
  constructor(message: string) {
    super("TRANSACTION_LOCK_TIMEOUT", message);
  }
}
