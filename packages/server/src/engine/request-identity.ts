import type { LockSpec } from "@leasehold/protocol";
import type { LockRequestState } from "./lock-request-state.js";

/**
 * Specs in ascending descriptor order (JavaScript string order, which is the protocol's). Returns
 * the given array when it is already sorted, so the common case allocates nothing.
 */
export function sortedSpecs(locks: readonly LockSpec[]): readonly LockSpec[] {
  for (let i = 1; i < locks.length; i++) {
    if ((locks[i - 1] as LockSpec).descriptor > (locks[i] as LockSpec).descriptor) {
      return locks.slice().sort((a, b) => (a.descriptor < b.descriptor ? -1 : 1));
    }
  }
  return locks;
}

/**
 * True when a retry asks for the same thing as the live request holding its requestId: the same
 * locks (in any order), behavior and max. The timeout and client description may differ between
 * retries, so they are not part of the identity.
 */
export function sameIdentity(req: LockRequestState, specs: readonly LockSpec[], allOrNone: boolean, max: number): boolean {
  const mine = req.specs;
  if (mine === null || req.allOrNone !== allOrNone || req.max !== max || mine.length !== specs.length) return false;
  for (let i = 0; i < specs.length; i++) {
    const a = mine[i] as LockSpec;
    const b = specs[i] as LockSpec;
    if (a.descriptor !== b.descriptor || a.mode !== b.mode || a.limit !== b.limit) return false;
  }
  return true;
}
