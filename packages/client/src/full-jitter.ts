/**
 * The "full jitter" backoff of exponential retries: a delay drawn uniformly from
 * `[0, min(capMs, baseMs · 2^attempt))`. Spreading each retry over the whole window (rather than
 * jittering around the exponential value) is what keeps many clients that failed together from
 * coming back together (AWS Architecture Blog, "Exponential Backoff And Jitter").
 *
 * `attempt` counts from 0. `random` is `Math.random` unless a test passes its own.
 */
export function fullJitterMs(attempt: number, baseMs: number, capMs: number, random: () => number = Math.random): number {
  // 2^30 already exceeds any sensible cap: clamping the exponent keeps the product finite.
  const window = Math.min(capMs, baseMs * 2 ** Math.min(attempt, 30));
  return random() * window;
}
