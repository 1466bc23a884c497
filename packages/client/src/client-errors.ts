import { LeaseholdError } from "@leasehold/protocol";

/** The error of a call on a `LockClient` after `close()`: `UNAVAILABLE`. */
export const closedError = (): LeaseholdError => new LeaseholdError("UNAVAILABLE", "the LockClient is closed");

/**
 * Refuse a `count` argument that is not an integer in 1..`max` (`INVALID_ARGUMENT` naming `what`,
 * the call), before anything is queued: a bad count must not fail a whole batch of other callers.
 */
export function positiveCount(n: number, max: number, what: string): void {
  if (!Number.isSafeInteger(n) || n < 1 || n > max) {
    throw new LeaseholdError("INVALID_ARGUMENT", `${what}: count must be an integer between 1 and ${max} (got ${String(n)})`, { path: "count" });
  }
}
