/**
 * One `setTimeout` armed for the engine's earliest deadline. Re-arming only when a strictly
 * earlier deadline appears keeps timer churn off the lock fast path (a new grant's lease expires
 * after every existing one, so it never re-arms); a timer that fires early because its deadline
 * went away costs one harmless `advance` and a re-arm.
 */
export class DeadlineTimer {
  private timer: NodeJS.Timeout | null = null;
  private armedFor = Infinity;

  /**
   * @param clock The engine's clock, in milliseconds.
   * @param onDue Called when the armed deadline has come; it should advance the engine and call
   *   {@link DeadlineTimer.arm} with the next deadline.
   */
  constructor(
    private readonly clock: () => number,
    private readonly onDue: () => void,
  ) {}

  /** Make sure the timer fires no later than `deadline` (`Infinity`: nothing to wait for). */
  arm(deadline: number): void {
    if (deadline >= this.armedFor) return;
    if (this.timer !== null) clearTimeout(this.timer);
    this.armedFor = deadline;
    // Rounded up (plus one) so the timer never fires just before the deadline and spins.
    const delay = Math.max(0, Math.ceil(deadline - this.clock()) + 1);
    this.timer = setTimeout(this.fire, Math.min(delay, 2_147_483_647));
    // The timer alone must not keep a process alive; open connections or callers do that.
    this.timer.unref();
  }

  /** Stop the timer for good (until the next {@link arm}). */
  clear(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    this.armedFor = Infinity;
  }

  private readonly fire = (): void => {
    this.timer = null;
    this.armedFor = Infinity;
    this.onDue();
  };
}
