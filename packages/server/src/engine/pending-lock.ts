import type { DeadlineItem } from "./deadline-heap.js";
import type { DescriptorState } from "./descriptor-state.js";
import type { LockRequestState } from "./lock-request-state.js";

/**
 * What {@link LockEngine.lock} answers when a request has to wait: a handle whose outcome arrives
 * later through the engine's `onSettled` hook. A retry with the same `requestId` gets the very
 * same handle, so callers can tell that they share one wait.
 *
 * It also holds the request's waiting state (its place in a descriptor's queue, its deadline, its
 * place among watchers), so a request that is granted at once, and every held lock, carries none of
 * it: the request drops its handle when it settles.
 */
export class PendingLock implements DeadlineItem {
  /** Distinguishes a handle from the immediate answers `acquired` and `timeout`. */
  readonly status = "waiting" as const;
  /** @internal The request this handle stands for. */
  readonly request: LockRequestState;
  /** @internal When it times out, on the engine's clock, rounded up to a whole millisecond (see `LockRequestState.expiresAt`). */
  deadline = 0;
  /** @internal Its slot in the engine's deadline heap. */
  heapIndex = -1;
  /** @internal The descriptor an all-or-none request is queued on, if any. */
  queuedOn: DescriptorState | null = null;
  /** @internal Mode code wanted on `queuedOn`. */
  queueMode = 0;
  /** @internal Queue links on `queuedOn`. */
  queuePrev: PendingLock | null = null;
  /** @internal */
  queueNext: PendingLock | null = null;
  /** @internal True while an as-many-as-possible request watches its descriptors. */
  watching = false;
  /** @internal Order of arrival among waiting requests (1, 2, …): the cursor of the watchers view. */
  waitSerial = 0;

  /** @internal Only the engine creates handles. */
  constructor(request: LockRequestState) {
    this.request = request;
  }
}
