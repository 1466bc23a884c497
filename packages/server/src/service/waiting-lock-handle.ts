import type { LockResponse } from "@leasehold/protocol";
import type { WaitingLock } from "./embedded-lock-service.js";

/** The service's {@link WaitingLock}: a class so callers can tell it from an immediate answer. */
export class WaitingLockHandle implements WaitingLock {
  readonly answer: Promise<LockResponse>;
  readonly abandon: () => void;

  constructor(answer: Promise<LockResponse>, abandon: () => void) {
    this.answer = answer;
    this.abandon = abandon;
    // The host may abandon without ever awaiting: never let that become an unhandled rejection.
    answer.catch(() => undefined);
  }
}
