import type { HoldMode } from "../../../src/history/index.js";

/** What the workload did, as the holders saw it (the resources' view is in the history). */
export interface WorkloadStats {
  /** Lock calls made. */
  lockCalls: number;
  /** Lock calls answered `timeout` (nothing granted within `acquireTimeoutMs`). */
  timeouts: number;
  /** Every distinct `validForMs` the server answered in a grant. */
  validForMs: number[];
  /** Grants by mode. */
  grants: Record<HoldMode, number>;
  /**
   * Grants the client itself did not count as held when they arrived (`LockClient.isHeld` false):
   * the request waited in the queue longer than `validForMs`, the lease the client counts from
   * before the request was sent.
   */
  notHeldOnArrival: number;
  /** Grants whose request waited more than half of `validForMs`, renewed at once with `refresh`. */
  renewedAfterWait: number;
  /** Of those, refreshes that did not answer the token (the lock was already gone). */
  renewalsRefused: number;
  /** Holds abandoned before their first operation because the holder's guarantee had run out. */
  expiredBeforeUse: number;
  /** Holds that stopped after their first operation because the guarantee ran out (no pause). */
  expiredMidHold: number;
  /** First operations refused (shared readers overtaken by a newer reader, mostly). */
  firstOperationRefused: Record<HoldMode, number>;
  /** Simulated GC pauses, by the mode held while pausing. */
  pauses: Record<HoldMode, number>;
  /** Milliseconds paused in total. */
  pausedMs: number;
  /** Operations attempted after a pause: refused (a newer holder had used the resource) or accepted. */
  afterPause: { refused: number; accepted: number };
  /** Releases sent with an awaited `unlock`, and with `tryUnlock`. */
  releases: { unlock: number; tryUnlock: number };
  /** Tokens reported on the clients' `lostLocks`, by reason. */
  lostLocks: Record<string, number>;
  /** Refresh calls the clients sent (their refreshers and the holders' renewals). */
  refreshCalls: number;
  /** `unlock` calls of the clients' background unlockers (`tryUnlock`) that failed; should be 0. */
  unlockFailures: number;
  /** Errors thrown by lock, refresh or unlock calls; each should be 0. */
  errors: string[];
}

/** A fresh, all-zero {@link WorkloadStats}. */
export function emptyWorkloadStats(): WorkloadStats {
  return {
    lockCalls: 0,
    timeouts: 0,
    validForMs: [],
    grants: { exclusive: 0, shared: 0 },
    notHeldOnArrival: 0,
    renewedAfterWait: 0,
    renewalsRefused: 0,
    expiredBeforeUse: 0,
    expiredMidHold: 0,
    firstOperationRefused: { exclusive: 0, shared: 0 },
    pauses: { exclusive: 0, shared: 0 },
    pausedMs: 0,
    afterPause: { refused: 0, accepted: 0 },
    releases: { unlock: 0, tryUnlock: 0 },
    lostLocks: {},
    refreshCalls: 0,
    unlockFailures: 0,
    errors: [],
  };
}
