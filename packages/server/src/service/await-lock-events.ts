import { LeaseholdError } from "@leasehold/protocol";
import type { LockWatchLog } from "../engine/lock-watch-log.js";
import { nodeTimer } from "./deadline-timer.js";

/** Long polls waiting now, so a closing service can answer them at once. */
export type WaitingPolls = Set<() => void>;

/**
 * Wait until `log` changes, `waitMs` passes, `signal` aborts (rejects `CANCELLED`) or the service
 * closes (`polls` entries are called): a `lock-events` long poll. Whatever ends the wait, the caller
 * asks the engine again and answers what it says then, so nothing here decides an answer.
 * `setTimer` sets the wait's timer (default {@link nodeTimer}).
 */
export function awaitLockEvents(
  log: LockWatchLog,
  waitMs: number,
  signal: AbortSignal | undefined,
  polls: WaitingPolls,
  setTimer: (fn: () => void, ms: number) => () => void = nodeTimer,
): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (signal?.aborted === true) {
      reject(cancelled());
      return;
    }
    const cancelTimer = setTimer(done, waitMs);
    const stopListening = log.onChange(done);
    const onAbort = (): void => {
      cleanUp();
      reject(cancelled());
    };
    signal?.addEventListener("abort", onAbort, { once: true });
    polls.add(done);
    function cleanUp(): void {
      cancelTimer();
      stopListening();
      polls.delete(done);
      signal?.removeEventListener("abort", onAbort);
    }
    function done(): void {
      cleanUp();
      resolve();
    }
  });
}

function cancelled(): LeaseholdError {
  return new LeaseholdError("CANCELLED", "the lock-events long poll was abandoned: its caller aborted or disconnected");
}
