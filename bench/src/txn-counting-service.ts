import type { LockService } from "@leasehold/protocol";

/** A LockService that forwards every call and counts the `unlock` calls that went through it. */
export interface CountingLockService extends LockService {
  /** `unlock` calls so far, whoever sent them (`unlock()` or the batched `tryUnlock`). */
  readonly unlockCalls: number;
  /** Start counting from zero again. */
  reset(): void;
}

/**
 * Wrap `inner` so a benchmark can count unlock calls the same way in both unlock modes: the
 * client's own `stats().unlockCalls` only sees the batched unlocker, not awaited `unlock()` calls.
 */
export function countingLockService(inner: LockService): CountingLockService {
  let unlockCalls = 0;
  return {
    get unlockCalls() {
      return unlockCalls;
    },
    reset() {
      unlockCalls = 0;
    },
    lock: (ns, req, opts) => inner.lock(ns, req, opts),
    unlock: (ns, req, opts) => {
      unlockCalls++;
      return inner.unlock(ns, req, opts);
    },
    refresh: (ns, req, opts) => inner.refresh(ns, req, opts),
    timestamps: (ns, req, opts) => inner.timestamps(ns, req, opts),
    startTransactions: (ns, req, opts) => inner.startTransactions(ns, req, opts),
    immutableTimestamp: (ns, req, opts) => inner.immutableTimestamp(ns, req, opts),
    health: (opts) => inner.health(opts),
  };
}
