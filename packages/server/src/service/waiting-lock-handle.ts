import { LeaseholdError, onAbort, type LockResponse } from "@leasehold/protocol";
import type { WaitingLock } from "./embedded-lock-service.js";

/**
 * The service's {@link WaitingLock}: a class so callers can tell it from an immediate answer.
 * `T` is what the wait settles with: a lock's answer (the default), or a `wait-for-locks` answer.
 */
export class WaitingLockHandle<T = LockResponse> implements WaitingLock<T> {
  readonly answer: Promise<T>;
  readonly abandon: () => void;
  /**
   * True when the answer is already decided and only waits for a standby's acknowledgement
   * (cluster mode with `--replicas 1`): it settles within a replication round trip, never on
   * another request's release. A lock batch whose open entries are all such answers sends its head
   * with them, in one write, rather than at once (serve-lock-batch.ts). Default false: a real wait.
   */
  readonly acknowledging: boolean;

  constructor(answer: Promise<T>, abandon: () => void, acknowledging = false) {
    this.answer = answer;
    this.abandon = abandon;
    this.acknowledging = acknowledging;
    // The host may abandon without ever awaiting: never let that become an unhandled rejection.
    answer.catch(() => undefined);
  }
}

/** The `CANCELLED` error of a wait whose caller aborted or disconnected. */
export function cancelled(): LeaseholdError {
  return new LeaseholdError("CANCELLED", "the lock request was abandoned: its caller aborted or disconnected");
}

/**
 * Begin a call that may wait and tie its wait to `signal`: an abort before the answer abandons
 * this caller (`CANCELLED`). An already aborted signal runs `validate` only (so bad input is still
 * reported as such) and begins nothing.
 */
export async function followSignal<T>(signal: AbortSignal | undefined, validate: () => void, begin: () => T | WaitingLockHandle<T>): Promise<T> {
  if (signal?.aborted === true) {
    validate();
    throw cancelled();
  }
  const begun = begin();
  if (!(begun instanceof WaitingLockHandle)) return begun;
  if (signal !== undefined) {
    // onAbort, not addEventListener: one signal may be shared by many waiting calls.
    const off = onAbort(signal, () => begun.abandon());
    begun.answer.then(off, off);
  }
  return begun.answer;
}
