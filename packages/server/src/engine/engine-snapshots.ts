import type { LockMode } from "@leasehold/protocol";

// The types the engine hands back (its metrics and snapshots) are declared here, beside it, so the
// engine imports nothing from the service that hosts it (DESIGN.md: the engine owns its ports).

/** Counters and gauges the service keeps; the HTTP layer renders them at `GET /metrics`. */
export interface ServiceMetrics {
  /** Namespaces created so far. */
  readonly namespaces: number;
  /** Held (descriptor, token) pairs, immutable-timestamp locks excluded. */
  readonly heldLocks: number;
  /** Live tokens: granted lock requests plus immutable-timestamp locks. */
  readonly heldTokens: number;
  /** Lock requests waiting now. */
  readonly waitingRequests: number;
  /** Descriptor grants since start. */
  readonly grantsTotal: number;
  /** Lock requests answered `timeout` since start. */
  readonly timeoutsTotal: number;
  /** Tokens released because their lease lapsed, since start. */
  readonly leaseLapsesTotal: number;
  /** Tokens released by unlock since start. */
  readonly unlocksTotal: number;
  /** Waiting requests abandoned (client gone or aborted) since start. */
  readonly abandonedTotal: number;
  /** Holders released by an admin's revoke since start (absent from services without revoke). */
  readonly revokedTotal?: number | undefined;
}

/** One held or waiting entry of a descriptor, for snapshots. */
export interface DescriptorSnapshot {
  readonly descriptor: string;
  /** Current permit limit (permit mode only). */
  readonly limit?: number;
  readonly holders: readonly { readonly mode: LockMode; readonly fencingToken: number }[];
  /** Waiting requests in queue order. */
  readonly queue: readonly { readonly mode: LockMode }[];
}

/**
 * A deterministic picture of one namespace's lock table, with no tokens in it. Tests compare one
 * taken before bad input with one taken after, to prove the input changed nothing.
 */
export interface LockTableSnapshot {
  /** Descriptors with holders or waiters, sorted by descriptor. */
  readonly descriptors: readonly DescriptorSnapshot[];
  readonly heldTokens: number;
  readonly waitingRequests: number;
  /** Start timestamps of held immutable-timestamp locks, ascending. */
  readonly immutableLocks: readonly number[];
  /** The next number the namespace's counter would hand out. */
  readonly nextTimestamp: number;
}
