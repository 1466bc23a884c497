/** What {@link fullJitterBackoff} draws from. */
export interface FullJitterOptions {
  /** The first attempt's ceiling, in ms; it doubles with each attempt. */
  readonly baseMs: number;
  /** The largest ceiling, in ms: no wait is ever longer. */
  readonly capMs: number;
  /**
   * A uniform random number in [0, 1). Default `Math.random`: the spread only has to differ
   * between processes, not resist an adversary. Tests pass their own to see the bounds.
   */
  readonly random?: (() => number) | undefined;
}

/**
 * The wait before retry number `attempt` (1 for the first) with "full jitter":
 * `random(0, min(capMs, baseMs · 2^(attempt - 1)))`. A plain exponential backoff keeps clients
 * that failed together (say, at a server restart) retrying together, each wave as large as the
 * first; drawing the whole wait at random spreads them over the interval, so the server sees a
 * trickle instead of a thundering herd, for the same expected total wait.
 */
export function fullJitterBackoff(attempt: number, options: FullJitterOptions): number {
  const { baseMs, capMs, random = Math.random } = options;
  // 2^(attempt-1) overflows to Infinity for very large attempts; min() with the cap keeps it finite.
  const ceiling = Math.min(capMs, baseMs * 2 ** Math.max(0, attempt - 1));
  return Math.floor(random() * ceiling);
}
