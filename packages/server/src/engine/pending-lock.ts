import type { LockRequestState } from "./lock-request-state.js";

/**
 * What {@link LockEngine.lock} answers when a request has to wait: a handle whose outcome arrives
 * later through the engine's `onSettled` hook. A retry with the same `requestId` gets the very
 * same handle, so callers can tell that they share one wait.
 */
export class PendingLock {
  /** Distinguishes a handle from the immediate answers `acquired` and `timeout`. */
  readonly status = "waiting" as const;
  /** @internal The request this handle stands for. */
  readonly request: LockRequestState;

  /** @internal Only the engine creates handles. */
  constructor(request: LockRequestState) {
    this.request = request;
  }
}
