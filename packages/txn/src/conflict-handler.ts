/**
 * How a table's writes are protected, after AtlasDB's conflict handlers:
 *
 * - `ignore-all`: no commit locks, no checks; the last committer wins. For data written by one
 *   writer only, or where a lost update is acceptable.
 * - `retry-on-write-write`: commit locks on each written **row**; the commit fails (and is retried)
 *   when a transaction that committed after this one started wrote one of the same cells.
 * - `retry-on-write-write-cell`: the same check, with locks on each written **cell**, so writers of
 *   different columns of one row never wait for each other.
 * - `serializable`: row locks and the write-write check, plus a read-write check: every cell read
 *   from the snapshot must still hold the same version at the commit timestamp. Prevents write skew.
 */
export const CONFLICT_HANDLERS = ["ignore-all", "retry-on-write-write", "retry-on-write-write-cell", "serializable"] as const;

/** One of {@link CONFLICT_HANDLERS}. */
export type ConflictHandler = (typeof CONFLICT_HANDLERS)[number];

/** What a handler asks of the commit path. */
export interface ConflictPolicy {
  /** Which commit locks the written cells need. */
  readonly lock: "none" | "row" | "cell";
  /** Whether the commit checks for a concurrent committed write of the same cells. */
  readonly writeWrite: boolean;
  /** Whether the commit re-reads what it read at the commit timestamp. */
  readonly readWrite: boolean;
}

const POLICIES: Readonly<Record<ConflictHandler, ConflictPolicy>> = {
  "ignore-all": { lock: "none", writeWrite: false, readWrite: false },
  "retry-on-write-write": { lock: "row", writeWrite: true, readWrite: false },
  "retry-on-write-write-cell": { lock: "cell", writeWrite: true, readWrite: false },
  serializable: { lock: "row", writeWrite: true, readWrite: true },
};

/** The commit-path policy of `handler`. */
export function conflictPolicy(handler: ConflictHandler): ConflictPolicy {
  return POLICIES[handler];
}

/** True when `value` names a conflict handler. */
export function isConflictHandler(value: unknown): value is ConflictHandler {
  return typeof value === "string" && (CONFLICT_HANDLERS as readonly string[]).includes(value);
}
