import { LeaseholdError, onAbort, type LockAcquiredResponse, type LockSpec } from "@leasehold/protocol";
import type { Observable } from "rxjs";
import type { LockOptions } from "./lock-options.js";
import { LOCK_TIMEOUT, type LockResult, type LockTimeout } from "./lock-result.js";
import type { LostLock } from "./lost-lock.js";

/** Options of `LockClient.withLock`: those of `lock`, and the safety margin. */
export interface WithLockOptions extends LockOptions {
  /**
   * How long before the lease would lapse the work's signal aborts, when refreshes have not
   * extended it, in ms: a finite number ≥ 0 (anything else rejects with `INVALID_ARGUMENT` before
   * any lock is taken, since a negative margin would fire after the lease end and `NaN` would
   * fire every millisecond). Default: a fifth of the lease's `validForMs`, at most 2,000: enough
   * for the work to notice and stop while the lock is still surely held.
   */
  readonly leaseMarginMs?: number | undefined;
}

/**
 * The outcome of `withLock` (and of every recipe that runs work under a lock): the work's result,
 * or the one timeout answer of `lock` and the recipes (the work never ran).
 */
export type WithLockResult<T> = { readonly status: "acquired"; readonly value: T; readonly lock: LockAcquiredResponse } | LockTimeout;

/**
 * The work run under the lock: `signal` aborts when the lock is lost or about to lapse (or the
 * caller's signal aborts); `lock` is the grant, with its fencing tokens.
 */
export type WithLockWork<T> = (signal: AbortSignal, lock: LockAcquiredResponse) => Promise<T> | T;

/** What {@link runWithLock} needs from the client. */
export interface WithLockHost {
  lock(locks: readonly LockSpec[], options: LockOptions): Promise<LockResult>;
  tryUnlock(tokens: readonly string[]): void;
  readonly lostLocks: Observable<LostLock>;
  /** Lease end of a held token (monotonic ms), undefined once not held. */
  leaseEnd(token: string): number | undefined;
  now(): number;
}

/** Run `fn` while holding `locks`; see `LockClient.withLock`. */
export async function runWithLock<T>(
  host: WithLockHost,
  locks: readonly LockSpec[],
  options: WithLockOptions,
  fn: WithLockWork<T>,
): Promise<WithLockResult<T>> {
  checkLeaseMargin(options.leaseMarginMs);
  const answer = await host.lock(locks, options);
  if (answer.status === "timeout") return LOCK_TIMEOUT;
  const { token } = answer;
  const controller = new AbortController();
  const abort = (reason: string): void => {
    if (!controller.signal.aborted) {
      controller.abort(new LeaseholdError("UNAVAILABLE", `the lock is no longer safely held (${reason}); stop the work`, { reason }));
    }
  };
  const margin = options.leaseMarginMs ?? Math.min(2_000, answer.lease.validForMs / 5);
  const lost = host.lostLocks.subscribe((event) => {
    if (event.token === token) abort(event.reason);
  });
  let timer: NodeJS.Timeout | undefined;
  // Lease ends only move later, so sleeping until the current end minus the margin and checking
  // again is never late.
  const watch = (): void => {
    const end = host.leaseEnd(token);
    if (end === undefined) return abort("not-held");
    const wait = end - margin - host.now();
    if (wait <= 0) return abort("lease-expiring");
    timer = setTimeout(watch, wait);
  };
  // onAbort, not addEventListener: one signal may be shared by many scopes at once.
  const offCallerAbort = options.signal === undefined ? undefined : onAbort(options.signal, () => abort("caller-aborted"));
  watch();
  try {
    const value = await fn(controller.signal, answer);
    return { status: "acquired", value, lock: answer };
  } finally {
    clearTimeout(timer);
    lost.unsubscribe();
    offCallerAbort?.();
    host.tryUnlock([token]);
  }
}

/** A margin must be a finite number ≥ 0: the signal's promise is "before the lease end, never after". */
function checkLeaseMargin(margin: unknown): void {
  if (margin === undefined) return;
  if (typeof margin !== "number" || !Number.isFinite(margin) || margin < 0) {
    const got = typeof margin === "number" ? String(margin) : typeof margin;
    throw new LeaseholdError("INVALID_ARGUMENT", `withLock: leaseMarginMs must be a finite number of milliseconds >= 0 (got ${got})`, {
      path: "leaseMarginMs",
    });
  }
}
