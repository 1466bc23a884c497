/** What {@link AdoptAfterAck} reads of, and asks of, the taker's runtime. */
export interface AdoptAfterAckHost {
  /** The member's monotonic clock (ms) and timers. */
  readonly now: () => number;
  readonly setTimer: (fn: () => void, ms: number) => unknown;
  /**
   * True while an adoption of `shard` is still worth trying: this member does not lead it, is not
   * stopping, and its replica's last entry is still the leader's hand-over entry.
   */
  readonly awaits: (shard: number) => boolean;
  /** True while a claim of `shard` with the replica is in flight (an adoption on a NOTIFY, or by a pass): try again later. */
  readonly busy: (shard: number) => boolean;
  /**
   * The fenced adoption of the row as the hand-over leaves it (the NOTIFY's: `ClusterRuntime`'s
   * `adoptNotified`): true when adopted, false when tried and not adopted (not moved yet, or the
   * answer lost), `null` when nothing could be tried.
   */
  readonly adopt: (shard: number) => Promise<boolean | null>;
  /** Time between attempts (ms). */
  readonly intervalMs: number;
  /** How long after the acknowledgement attempts go on (ms): about a leader lease, the moved row's first expiry. */
  readonly forMs: number;
}

/**
 * The adoption of a hand-over by its taker on its own (found by `pnpm sim`, seed 50986). A taker
 * that acknowledged its leader's final hand-over entry holds the whole table, and the row moves to
 * it next, with a NOTIFY that adopts it at once. But a NOTIFY may be lost, and so may the answers
 * of the taker's next reads of the rows; a stop's hand-over clears the row's standby, so no member
 * leaves the row an extra lease: once it expired and was seen unchanged for a leader lease, any
 * member takes it empty, and every lock is lost. So from each acknowledgement of a hand-over
 * entry the taker tries the NOTIFY's fenced adoption every {@link AdoptAfterAckHost.intervalMs}
 * for {@link AdoptAfterAckHost.forMs}, until it adopted the row or has nothing to adopt (it leads
 * the shard, stops, or its leader appended again: it kept the shard). The statement matches only
 * the row as the hand-over leaves it (holder and incarnation this process, the replica's epoch +
 * 1, its `leaderId`), so an attempt before the move, or after another member took the row,
 * changes nothing.
 */
export class AdoptAfterAck {
  /** Per shard, until when (the host's clock) attempts go on; absent when none are scheduled. */
  private readonly until = new Map<number, number>();

  constructor(private readonly host: AdoptAfterAckHost) {}

  /** The replica of `shard` acknowledged a hand-over entry: attempt the adoption on a timer from now. */
  acknowledged(shard: number): void {
    const until = this.host.now() + this.host.forMs;
    const running = this.until.has(shard);
    this.until.set(shard, until);
    if (!running) this.next(shard);
  }

  private next(shard: number): void {
    this.host.setTimer(() => void this.attempt(shard), this.host.intervalMs);
  }

  private async attempt(shard: number): Promise<void> {
    const { host } = this;
    const until = this.until.get(shard);
    if (until === undefined || host.now() > until || !host.awaits(shard)) return void this.until.delete(shard);
    if (!host.busy(shard)) {
      const adopted = await host.adopt(shard).catch(() => false);
      if (adopted !== false) return void this.until.delete(shard);
    }
    this.next(shard);
  }
}
