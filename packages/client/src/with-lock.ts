import { LeaseholdError, type LockAcquiredResponse, type LockResponse, type LockSpec } from "@leasehold/protocol";
import type { Observable } from "rxjs";
import type { LockOptions } from "./lock-options.js";
import type { LostLock } from "./lost-lock.js";

/** Options of `LockClient.withLock`: those of `lock`, and the safety margin. */
export interface WithLockOptions extends LockOptions {
  /**
   * How long before the lease would lapse the work's signal aborts, when refreshes have not
   * extended it, in ms. Default: a fifth of the lease's `validForMs`, at most 2,000: enough for
   * the work to notice and stop while the lock is still surely held.
   */
  readonly leaseMarginMs?: number | undefined;
}

/** The outcome of `withLock`: the work's result, or the timeout answer (the work never ran). */
export type WithLockResult<T> =
  | { readonly status: "acquired"; readonly value: T; readonly lock: LockAcquiredResponse }
  | { readonly status: "timeout" };

/** What {@link runWithLock} needs from the client. */
export interface WithLockHost {
  lock(locks: readonly LockSpec[], options: LockOptions): Promise<LockResponse>;
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
  fn: (signal: AbortSignal, lock: LockAcquiredResponse) => Promise<T> | T,
): Promise<WithLockResult<T>> {
  const answer = await host.lock(locks, options);
  if (answer.status === "timeout") return { status: "timeout" };
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
  const onCallerAbort = (): void => abort("caller-aborted");
  options.signal?.addEventListener("abort", onCallerAbort, { once: true });
  watch();
  try {
    const value = await fn(controller.signal, answer);
    return { status: "acquired", value, lock: answer };
  } finally {
    clearTimeout(timer);
    lost.unsubscribe();
    options.signal?.removeEventListener("abort", onCallerAbort);
    host.tryUnlock([token]);
  }
}
