/** A token bucket per client key (the server uses the client's IP address). */
export interface RateLimiter {
  /** The sustained rate each key may send, quoted in refusals. */
  readonly requestsPerSecond: number;
  /**
   * Take one request's worth from `key`'s bucket. Answers 0 when the request may go on, otherwise
   * the whole seconds after which one will be available again (for a `retry-after` header).
   */
  take(key: string): number;
}

/** Options of {@link createRateLimiter}. */
export interface RateLimiterOptions {
  /** Sustained requests per second each key may send. Must be positive. */
  readonly requestsPerSecond: number;
  /**
   * How many requests a key may send at once after being idle. Default: one second's worth
   * (`max(1, requestsPerSecond)`), so short bursts of a well-behaved client are never refused.
   */
  readonly burst?: number | undefined;
  /** Monotonic clock in milliseconds. Default `performance.now()`; tests inject a fake one. */
  readonly clock?: (() => number) | undefined;
}

interface Bucket {
  tokens: number;
  at: number;
}

/**
 * Build a per-key token bucket. Buckets that have refilled completely are dropped whenever the
 * table has doubled since its last sweep, so memory follows the number of recently active clients,
 * not every address ever seen.
 */
export function createRateLimiter(options: RateLimiterOptions): RateLimiter {
  const rate = options.requestsPerSecond;
  if (!(rate > 0) || !Number.isFinite(rate)) throw new RangeError(`requestsPerSecond must be a positive number (got ${rate})`);
  const burst = options.burst ?? Math.max(1, rate);
  if (!(burst >= 1) || !Number.isFinite(burst)) throw new RangeError(`burst must be a number >= 1 (got ${burst})`);
  const clock = options.clock ?? (() => performance.now());
  const buckets = new Map<string, Bucket>();
  let sweepAt = 1024;

  const refill = (bucket: Bucket, now: number): void => {
    bucket.tokens = Math.min(burst, bucket.tokens + ((now - bucket.at) / 1000) * rate);
    bucket.at = now;
  };

  function sweep(now: number): void {
    for (const [key, bucket] of buckets) {
      refill(bucket, now);
      if (bucket.tokens >= burst) buckets.delete(key);
    }
    sweepAt = Math.max(1024, buckets.size * 2);
  }

  return {
    requestsPerSecond: rate,
    take(key) {
      const now = clock();
      let bucket = buckets.get(key);
      if (bucket === undefined) {
        if (buckets.size >= sweepAt) sweep(now);
        buckets.set(key, (bucket = { tokens: burst, at: now }));
      } else refill(bucket, now);
      if (bucket.tokens >= 1) {
        bucket.tokens -= 1;
        return 0;
      }
      return Math.max(1, Math.ceil((1 - bucket.tokens) / rate));
    },
  };
}
