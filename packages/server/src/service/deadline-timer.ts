/** Node's `setTimeout`, unref'd (a timer alone never keeps a process alive); answers the cancel. */
export function nodeTimer(fn: () => void, ms: number): () => void {
  const timer = setTimeout(fn, Math.min(Math.max(0, ms), 2_147_483_647));
  timer.unref();
  return () => clearTimeout(timer);
}

/**
 * One timer armed for the engine's earliest deadline. Re-arming only when a strictly
 * earlier deadline appears keeps timer churn off the lock fast path (a new grant's lease expires
 * after every existing one, so it never re-arms); a timer that fires early because its deadline
 * went away costs one harmless `advance` and a re-arm.
 */
export class DeadlineTimer {
  private cancel: (() => void) | null = null;
  private armedFor = Infinity;

  /**
   * @param clock The engine's clock, in milliseconds.
   * @param onDue Called when the armed deadline has come; it should advance the engine and call
   *   {@link DeadlineTimer.arm} with the next deadline.
   * @param setTimer Sets a timer on `clock`'s time; default {@link nodeTimer}.
   */
  constructor(
    private readonly clock: () => number,
    private readonly onDue: () => void,
    private readonly setTimer: (fn: () => void, ms: number) => () => void = nodeTimer,
  ) {}

  /** Make sure the timer fires no later than `deadline` (`Infinity`: nothing to wait for). */
  arm(deadline: number): void {
    if (deadline >= this.armedFor) return;
    this.cancel?.();
    this.armedFor = deadline;
    // Rounded up (plus one) so the timer never fires just before the deadline and spins.
    this.cancel = this.setTimer(this.fire, Math.max(0, Math.ceil(deadline - this.clock()) + 1));
  }

  /** Stop the timer for good (until the next {@link arm}). */
  clear(): void {
    this.cancel?.();
    this.cancel = null;
    this.armedFor = Infinity;
  }

  private readonly fire = (): void => {
    this.cancel = null;
    this.armedFor = Infinity;
    this.onDue();
  };
}
