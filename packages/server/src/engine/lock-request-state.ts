import type { AcquiredLock, LockSpec } from "@leasehold/protocol";
import { modeName } from "./lock-mode-codes.js";
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
  /**
   * What it holds, two slots a descriptor in ascending order: the descriptor's state, then the
   * fencing token it was granted with; `heldCount` pairs are filled. One flat array instead of a
   * descriptor array plus an answer object per descriptor: the answer is rebuilt from it when asked
   * (the mode is the holders' mode, which all holders of a descriptor share), which saves about
   * 100 bytes a held lock (docs/architecture.md "Memory per held lock").
   */
  holds: (DescriptorState | number)[];
  /** Number of descriptors held. */
  heldCount = 0;
  /** Start timestamp of an immutable-timestamp lock; 0 for lock requests. */
  startTimestamp = 0;
  /**
   * When a waiting request times out, on the engine's clock, rounded up to a whole millisecond.
   * Every time field holds whole milliseconds: V8 keeps small integers inline in the object, while
   * a field that ever held a fraction (or Infinity) stores every value as a separate 16-byte heap
   * number (docs/architecture.md "Memory per held lock").
   */
  deadline = 0;
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
  /** When the request arrived (immutable-timestamp locks: when started), on the engine's clock, in whole milliseconds. */
  arrivedAt = 0;
  /** When it was granted and became a token, on the engine's clock in whole milliseconds; 0 until then. */
  grantedAt = 0;
  /** Order of arrival among waiting requests (1, 2, …): the cursor of the watchers view; 0 if it never waited. */
  waitSerial = 0;
  /** The token's fingerprint once something asked for it (see `tokenFingerprint`); "" until then. */
  fingerprint = "";

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
    // Exactly sized: a held lock should not pay for the 17 slots a pushed-to [] would grow.
    const slots = specs === null ? 0 : Math.min(specs.length, max);
    this.holds = new Array<DescriptorState | number>(2 * slots);
  }

  /** Record that it now holds `d`, granted with `fencingToken`. */
  addHold(d: DescriptorState, fencingToken: number): void {
    const i = 2 * this.heldCount++;
    this.holds[i] = d;
    this.holds[i + 1] = fencingToken;
  }

  /** The `i`-th descriptor held (0 ≤ i < heldCount). */
  heldAt(i: number): DescriptorState {
    return this.holds[2 * i] as DescriptorState;
  }

  /** The fencing token of the `i`-th descriptor held. */
  fencingAt(i: number): number {
    return this.holds[2 * i + 1] as number;
  }

  /** Drop the unused slots once it holds all it will (as-many-as-possible may take fewer than it asked). */
  trimHolds(): void {
    if (this.holds.length > 2 * this.heldCount) this.holds.length = 2 * this.heldCount;
  }

  /** What a grant answers it holds: descriptor, mode and fencing token of each, in ascending order. */
  acquired(): AcquiredLock[] {
    const out = new Array<AcquiredLock>(this.heldCount);
    for (let i = 0; i < this.heldCount; i++) {
      const d = this.heldAt(i);
      out[i] = { descriptor: d.key, mode: modeName(d.holderMode), fencingToken: this.fencingAt(i) };
    }
    return out;
  }
}
