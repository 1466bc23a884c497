import { onAbort } from "@leasehold/protocol";
import { WaitingLockHandle } from "../service/waiting-lock-handle.js";

/** The answer of a call that may wait, abandoning the wait if `signal` aborts first. */
export function followAbort<T>(begun: T | WaitingLockHandle<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!(begun instanceof WaitingLockHandle)) return Promise.resolve(begun);
  if (signal !== undefined) {
    if (signal.aborted) begun.abandon();
    // onAbort, not addEventListener: one signal may be shared by many waiting calls.
    const off = onAbort(signal, () => begun.abandon());
    begun.answer.then(off, off);
  }
  return begun.answer;
}
