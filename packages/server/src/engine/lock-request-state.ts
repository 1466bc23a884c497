import type { AcquiredLock, LockSpec } from "@leasehold/protocol";
import { modeName } from "./lock-mode-codes.js";
import type { DescriptorState } from "./descriptor-state.js";
import type { LeaseEntry } from "./lease-queue.js";
import type { NamespaceState } from "./namespace-state.js";
import { PendingLock } from "./pending-lock.js";

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
 * and the intrusive lease links mean a held lock costs no extra node objects. Whatever only a
 * waiting request needs (its place in a queue, its deadline, its handle) lives in its
 * {@link PendingLock}, made when it starts waiting and dropped at its grant, so a held lock does not
 * carry it (docs/architecture.md "Memory per held lock").
 */
export class LockRequestState implements LeaseEntry<LockRequestState> {
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
   * The first descriptor it holds (in ascending order), or null; most locks name one descriptor,
   * so it and its fencing token live in the request itself and such a lock needs no array.
   */
  hold0: DescriptorState | null = null;
  /** The fencing token `hold0` was granted with. */
  fence0 = 0;
  /**
   * The second and later holds, two slots each: the descriptor's state, then its fencing token;
   * null for requests that can hold only one descriptor. Kept this way rather than as a descriptor
   * array plus an answer object per descriptor: the answer is rebuilt when asked (the mode is the
   * holders' mode, which every holder of a descriptor shares), which saves about 150 bytes a held
   * lock (docs/architecture.md "Memory per held lock").
   */
  more: (DescriptorState | number)[] | null;
  /** Number of descriptors held. */
  heldCount = 0;
  /** Start timestamp of an immutable-timestamp lock; 0 for lock requests. */
  startTimestamp = 0;
  leasePrev: LockRequestState | null = null;
  leaseNext: LockRequestState | null = null;
  /**
   * When the lease lapses. Every time field holds whole milliseconds of the engine's clock: V8 keeps
   * small integers inline in the object, while a field that ever held a fraction (or Infinity)
   * stores every value as a separate 16-byte heap number (docs/architecture.md "Memory per held lock").
   */
  expiresAt = 0;
  /** Its waiting state and the handle given to its caller while it waits; null before it waits and after it settles. */
  pending: PendingLock | null = null;
  /** The `clientDescription` of the request, kept for inspection and logs; undefined when none. */
  clientDescription: string | undefined = undefined;
  /** When the request arrived (immutable-timestamp locks: when started), on the engine's clock, in whole milliseconds. */
  arrivedAt = 0;
  /** When it was granted and became a token, on the engine's clock in whole milliseconds; 0 until then. */
  grantedAt = 0;
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
    // Exactly sized: a held lock should not pay for the 17 slots a pushed-to [] would grow.
    const slots = specs === null ? 0 : Math.min(specs.length, max);
    this.more = slots > 1 ? new Array<DescriptorState | number>(2 * (slots - 1)) : null;
  }

  /** Its waiting state, made on first use: it is about to wait (queue or watch). */
  waiter(): PendingLock {
    return (this.pending ??= new PendingLock(this));
  }

  /** Record that it now holds `d`, granted with `fencingToken`. */
  addHold(d: DescriptorState, fencingToken: number): void {
    const i = this.heldCount++;
    if (i === 0) {
      this.hold0 = d;
      this.fence0 = fencingToken;
    } else {
      const more = this.more as (DescriptorState | number)[];
      more[2 * i - 2] = d;
      more[2 * i - 1] = fencingToken;
    }
  }

  /** The `i`-th descriptor held (0 ≤ i < heldCount). */
  heldAt(i: number): DescriptorState {
    return (i === 0 ? this.hold0 : (this.more as (DescriptorState | number)[])[2 * i - 2]) as DescriptorState;
  }

  /** The fencing token of the `i`-th descriptor held. */
  fencingAt(i: number): number {
    return i === 0 ? this.fence0 : ((this.more as (DescriptorState | number)[])[2 * i - 1] as number);
  }

  /** Drop the unused slots once it holds all it will (as-many-as-possible may take fewer than it asked). */
  trimHolds(): void {
    const more = this.more;
    if (more === null) return;
    if (this.heldCount <= 1) this.more = null;
    else if (more.length > 2 * (this.heldCount - 1)) more.length = 2 * (this.heldCount - 1);
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
