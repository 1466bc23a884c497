/**
 * The events of a mutual-exclusion run, as the {@link HistoryRecorder} keeps them and the history
 * checker reads them. Every time is a monotonic millisecond reading (`performance.now()`) of the
 * one process that ran the holders and the resources, so times of different holders compare.
 */

/** The two lock modes the workload takes (the protocol's `permit` mode is not exercised here). */
export type HoldMode = "exclusive" | "shared";

/** One granted lock: a holder took `mode` on `descriptor` and the server answered `fencingToken`. */
export interface GrantEvent {
  /** Names this one hold (a holder is one grant, not one client: a client holds many times). */
  readonly holder: string;
  /** The lock descriptor. */
  readonly descriptor: string;
  /** The mode granted. */
  readonly mode: HoldMode;
  /** The fencing token the server answered for the descriptor. */
  readonly fencingToken: number;
  /** Taken just before the lock call was made: the lease is measured from here. */
  readonly requestSentAt: number;
  /** Taken when the grant was in the holder's hands. */
  readonly grantReceivedAt: number;
  /**
   * Until when the holder was promised the lock, by its own conservative reckoning:
   * `requestSentAt + lease.validForMs`, or, when the holder renewed the lease with a `refresh`
   * that answered its token, that refresh's send time plus `validForMs` (the token was then held
   * without a break since the grant, since a lapsed token is never revived).
   */
  readonly guaranteeEndsAt: number;
}

/** A holder gave its lock back (the release call was made at `releasedAt`). */
export interface ReleaseEvent {
  /** The {@link GrantEvent.holder} released. */
  readonly holder: string;
  /** When the release call was made (the holder does nothing with the resource after it). */
  readonly releasedAt: number;
}

/** What a holder did to a resource: read the counter, or write a new value. */
export type OperationKind = "read" | "write";

/** One operation a resource received, accepted or refused, in the order it received them. */
export interface ResourceOperation {
  /** Position in the run's single sequence of operations (all resources share one sequence). */
  readonly seq: number;
  /** Which resource: one per lock descriptor, named by it. */
  readonly descriptor: string;
  /** The holder that sent it. */
  readonly holder: string;
  /** The fencing token it carried. */
  readonly fencingToken: number;
  /** The mode its holder said it held. */
  readonly mode: HoldMode;
  /** Read or write. */
  readonly kind: OperationKind;
  /** When the resource received it. */
  readonly at: number;
  /** Whether the resource accepted it (an accepted write is an acknowledged write). */
  readonly accepted: boolean;
  /** The counter value read (accepted reads) or written (accepted writes); the value at the time for refusals. */
  readonly value: number;
}

/** A whole run: every grant, release and resource operation, and each resource's final counter. */
export interface History {
  /** Every grant, in no particular order. */
  readonly grants: readonly GrantEvent[];
  /** Every release, in no particular order. */
  readonly releases: readonly ReleaseEvent[];
  /** Every resource operation, in `seq` order. */
  readonly operations: readonly ResourceOperation[];
  /** Each resource's counter at the end of the run, by descriptor (starting from 0). */
  readonly finalCounters: Readonly<Record<string, number>>;
}
