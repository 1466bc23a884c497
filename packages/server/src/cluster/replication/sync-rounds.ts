/**
 * The rounds of one term's standby writes (the row's `sync_round`, coordinator.ts): each write is
 * sent under a fresh round, above every one taken before, and matches only while the row's stored
 * round is below its own, so a write that matched fences every write of an earlier round for good,
 * whatever order they land in. A balance hand-over's row move takes a round too
 * (`Coordinator.handOver`'s `round`), and so is fenced by any later write that matched: how a move
 * whose outcome is unknown is shown never to commit (balance-hand-over.ts).
 */
export class SyncRounds {
  private last = 0;
  private matched = 0;
  private inFlight = 0;

  /** A fresh round for a statement sent outside {@link write} (a hand-over's row move). */
  take(): number {
    return ++this.last;
  }

  /**
   * Send a write under a fresh round (taken at once, before anything else can take one), and
   * note it when it matched. Answers what `send` answers; a rejection (its outcome unknown) is
   * passed on.
   */
  async write(send: (round: number) => Promise<boolean>): Promise<boolean> {
    const round = ++this.last;
    this.inFlight++;
    try {
      const matched = await send(round);
      if (matched && round > this.matched) this.matched = round;
      return matched;
    } finally {
      this.inFlight--;
    }
  }

  /** The highest round of a {@link write} known to have matched (0: none yet). */
  get matchedRound(): number {
    return this.matched;
  }

  /** True while a {@link write} awaits its answer. */
  get writing(): boolean {
    return this.inFlight > 0;
  }
}
