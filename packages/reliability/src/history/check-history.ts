import type { CheckResult } from "./check-result.js";
import { checkFencingOrder } from "./check-fencing-order.js";
import { checkLeaseOverlap } from "./check-lease-overlap.js";
import { checkNoLostWrites } from "./check-no-lost-writes.js";
import { checkStaleRefused } from "./check-stale-refused.js";
import { checkWellFormed } from "./check-well-formed.js";
import type { History } from "./history-types.js";

/** Every rule's result for one history, and their total. */
export interface HistoryCheckReport {
  /** The history is sound (operations come from grants, inside their holds, …). */
  readonly wellFormed: CheckResult;
  /** (a) no conflicting lease guarantees overlap. */
  readonly leaseOverlap: CheckResult;
  /** (b) fencing tokens increase in grant order. */
  readonly fencingOrder: CheckResult;
  /** (c) stale holders' operations were refused, and only theirs. */
  readonly staleRefused: CheckResult;
  /** (d) no acknowledged write was lost. */
  readonly noLostWrites: CheckResult;
  /** The results above, in that order. */
  readonly all: readonly CheckResult[];
  /** Sum of every rule's violations: 0 when the history passes. */
  readonly violations: number;
}

/**
 * Judge a mutual-exclusion history by every rule: well-formedness and rules (a)–(d) (see each
 * `check…` function for how it is computed). Pure: the same history always gets the same report.
 */
export function checkHistory(history: History): HistoryCheckReport {
  const wellFormed = checkWellFormed(history);
  const leaseOverlap = checkLeaseOverlap(history);
  const fencingOrder = checkFencingOrder(history);
  const staleRefused = checkStaleRefused(history);
  const noLostWrites = checkNoLostWrites(history);
  const all = [wellFormed, leaseOverlap, fencingOrder, staleRefused, noLostWrites];
  return { wellFormed, leaseOverlap, fencingOrder, staleRefused, noLostWrites, all, violations: all.reduce((n, r) => n + r.violations, 0) };
}
