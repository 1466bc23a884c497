import type { LockResponse } from "@leasehold/protocol";
import type { WaitingLock } from "./embedded-lock-service.js";

/**
 * The service's {@link WaitingLock}: a class so callers can tell it from an immediate answer.
 * `T` is what the wait settles with: a lock's answer (the default), or a `wait-for-locks` answer.
 */
export class WaitingLockHandle<T = LockResponse> implements WaitingLock<T> {
  readonly answer: Promise<T>;
  readonly abandon: () => void;

  constructor(answer: Promise<T>, abandon: () => void) {
    this.answer = answer;
    this.abandon = abandon;
    // The host may abandon without ever awaiting: never let that become an unhandled rejection.
    answer.catch(() => undefined);
  }
}
