/** One bucket of a histogram: how many observations were `<= le` (and above the previous bucket). */
export interface HistogramBucket {
  /** Upper bound of the bucket, inclusive; `Infinity` for the last one. */
  readonly le: number;
  /** Observations in this bucket (not cumulative). */
  readonly count: number;
}

/** A snapshot of a {@link LockClient}'s counters, from `stats()`. */
export interface ClientStatsSnapshot {
  /** Tokens handed to `tryUnlock` (after dropping malformed ones). */
  readonly tokensEnqueued: number;
  /**
   * `unlock` calls the unlocker sent (each with up to 10,000 tokens), for `tryUnlock` and awaited
   * `unlock` together: both share its single flight.
   */
  readonly unlockCalls: number;
  /** Tokens per unlocker `unlock` call: the batch size, which grows with load. */
  readonly tokensPerUnlockCall: readonly HistogramBucket[];
  /** Unlocker `unlock` calls that failed (logged once each, never retried; awaited callers get the error). */
  readonly unlockFailures: number;
  /** `refresh` calls sent, by the refresher and by `refresh()` together. */
  readonly refreshCalls: number;
  /** Tokens reported on `lostLocks`. */
  readonly lostLocks: number;
}

// Powers of two up to the protocol's 10,000 tokens per call, then the rest.
const BOUNDS = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, Infinity] as const;

/** Mutable counters behind {@link ClientStatsSnapshot}; internal to the client. */
export class ClientStats {
  tokensEnqueued = 0;
  unlockCalls = 0;
  unlockFailures = 0;
  refreshCalls = 0;
  lostLocks = 0;
  readonly #batchSizes = BOUNDS.map(() => 0);

  /** Record one unlocker call of `size` tokens. */
  recordUnlockCall(size: number): void {
    this.unlockCalls++;
    const i = BOUNDS.findIndex((le) => size <= le);
    this.#batchSizes[i] = (this.#batchSizes[i] ?? 0) + 1;
  }

  /** A frozen copy of the counters. */
  snapshot(): ClientStatsSnapshot {
    return Object.freeze({
      tokensEnqueued: this.tokensEnqueued,
      unlockCalls: this.unlockCalls,
      tokensPerUnlockCall: BOUNDS.map((le, i) => ({ le, count: this.#batchSizes[i] ?? 0 })),
      unlockFailures: this.unlockFailures,
      refreshCalls: this.refreshCalls,
      lostLocks: this.lostLocks,
    });
  }
}
