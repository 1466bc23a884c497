/** What the lock-holder child is told (one JSON argument). */
export interface LockHolderConfig {
  /** Server base URL. */
  readonly baseUrl: string;
  /** Namespace of the descriptors. */
  readonly namespace: string;
  /** Descriptors to lock exclusively, one lock request each. */
  readonly descriptors: readonly string[];
}

/** One lock the child holds. */
export interface HeldByChild {
  /** The descriptor. */
  readonly descriptor: string;
  /** Its fencing token. */
  readonly fencingToken: number;
}

/** The child's stdout events, one JSON line each. */
export type LockHolderEvent =
  | { readonly event: "held"; readonly locks: readonly HeldByChild[]; readonly validForMs: number }
  | { readonly event: "lost"; readonly reason: string }
  | { readonly event: "failed"; readonly message: string };
