import type { AcquiredLock, LockSpec } from "@leasehold/protocol";
import type { DeadlineItem } from "./deadline-heap.js";
import type { DescriptorState } from "./descriptor-state.js";
import type { LeaseEntry } from "./lease-queue.js";
import type { NamespaceState } from "./namespace-state.js";
import type { PendingLock } from "./pending-lock.js";

/** Status of a request queued on a descriptor or watching for one; it has no token yet. */
export const WAITING = 0;
/** Status of a granted request: its token is live and in the lease queue. */
export const HELD = 1;
/** Status once released, lapsed, timed out, abandoned or closed. */
export const DONE = 2;

/**
 * One lock request from arrival to release, and after its grant the token it became; also one
 * started transaction's immutable-timestamp lock. A single class with every field set in the
 * constructor keeps all of them one hidden class (monomorphic property access on the fast path),
 * and the intrusive links (queue, lease, heap index) mean a held lock costs no extra node objects.
 */
export class LockRequestState implements LeaseEntry<LockRequestState>, DeadlineItem {
  /** {@link WAITING}, {@link HELD} or {@link DONE}. */
  status = WAITING;
  /** The token, once granted. */
  token = "";
  /** Lock specs in ascending descriptor order; dropped after the grant unless a requestId needs them. */
  specs: readonly LockSpec[] | null;
  /** `max` of as-many-as-possible; the number of specs otherwise. */
  readonly max: number;
  /** True for all-or-none. */
  readonly allOrNone: boolean;
  /** Index in `specs` of the next descriptor an all-or-none request must acquire. */
  nextIndex = 0;
  /** Descriptors held, in ascending order; `heldCount` of them are filled. */
  held: DescriptorState[];
  /** What the answer lists, parallel to `held`. */
  acquired: AcquiredLock[];
  /** Number of descriptors held. */
  heldCount = 0;
  /** Start timestamp of an immutable-timestamp lock; 0 for lock requests. */
  startTimestamp = 0;
  /** When a waiting request times out. */
  deadline = Infinity;
  heapIndex = -1;
  /** The descriptor an all-or-none request is queued on, if any. */
  queuedOn: DescriptorState | null = null;
  /** Mode code wanted on `queuedOn`. */
  queueMode = 0;
  queuePrev: LockRequestState | null = null;
  queueNext: LockRequestState | null = null;
  /** True while an as-many-as-possible request watches its descriptors. */
  watching = false;
  leasePrev: LockRequestState | null = null;
  leaseNext: LockRequestState | null = null;
  expiresAt = 0;
  /** The handle given to the caller while it waits. */
  pending: PendingLock | null = null;
  /** The `clientDescription` of the request, kept for inspection and logs; undefined when none. */
  clientDescription: string | undefined = undefined;
  /** When the request arrived (immutable-timestamp locks: when started), on the engine's clock. */
  arrivedAt = 0;
  /** When it was granted and became a token, on the engine's clock; 0 until then. */
  grantedAt = 0;
  /** Order of arrival among waiting requests (1, 2, …): the cursor of the watchers view; 0 if it never waited. */
  waitSerial = 0;
  /** The token's fingerprint once something asked for it (see `tokenFingerprint`); "" until then. */
  fingerprint = "";
  /**
   * True for a `wait-for-locks` request: it queues as an all-or-none lock request would, but when
   * it reaches a descriptor it passes on to the next instead of taking it, and ends `free` once
   * past the last (see `LockTable.advanceAllOrNone`). It never holds anything and never gets a token.
   */
  waitOnly = false;
  /** The name of a timestamp lease (`timestamp-leases`); undefined for every other request. */
  leaseName: string | undefined = undefined;
  /** The timestamp a timestamp lease holds; 0 for every other request. */
  leased = 0;

  constructor(
    readonly namespace: NamespaceState,
    specs: readonly LockSpec[] | null,
    readonly requestId: string | undefined,
    allOrNone: boolean,
    max: number,
  ) {
    this.specs = specs;
    this.allOrNone = allOrNone;
    this.max = max;
    // Exactly sized arrays: a held lock should not pay for the 17 slots a pushed-to [] would grow.
    const slots = specs === null ? 0 : Math.min(specs.length, max);
    this.held = new Array<DescriptorState>(slots);
    this.acquired = new Array<AcquiredLock>(slots);
  }
}
