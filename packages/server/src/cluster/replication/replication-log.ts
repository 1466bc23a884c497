import type { ReplicationClock } from "./replication-clock.js";

/** One entry of a shard's log. */
export interface LogRecord<E> {
  readonly seq: number;
  readonly entry: E;
  /** Monotonic time it was appended (for the lag and the lateness watchdog). */
  readonly at: number;
}

/** A run of consecutive entries: `fromSeq + 1` … `fromSeq + entries.length`. */
export interface LogBatch<E> {
  readonly fromSeq: number;
  readonly entries: readonly E[];
}

/**
 * One term's ordered log of a shard (DESIGN.md "Locks that outlive their leader"). Entries are
 * opaque values numbered 1, 2, 3, … in the order they were appended; the log is what a standby
 * replays after the snapshot it was sent.
 *
 * Group commit: entries appended during one event-loop turn become visible to the sender together,
 * at the end of that turn ({@link ReplicationClock.defer}), so they travel in one batch. A turn
 * that appended only entries no answer waits for (releases: DESIGN.md answers them at once) is due
 * to the sender only after `lazyMs`, or sooner with the next turn that appended an urgent entry or
 * when someone starts waiting for one of them ({@link expedite}): a release then travels with the
 * next grant instead of costing the standby a message and the leader an acknowledgement of its own.
 * Acknowledgements are cumulative: `acknowledge(n)` says the standby holds every entry up to `n`,
 * and the entries it holds are dropped. While no standby follows the log ({@link retaining} false),
 * entries are only numbered, not kept: a standby that joins later gets a snapshot.
 */
export class ReplicationLog<E = unknown> {
  /** Sequence number of the last entry appended (0: none yet). */
  lastSeq = 0;
  /** Entries up to this one were appended in a turn that has ended: the sender may send them. */
  flushedSeq = 0;
  /** The standby holds every entry up to this one. */
  ackedSeq = 0;
  private records: LogRecord<E>[] = [];
  /** Index of the first live record in {@link records} (dropping from the front is O(1)). */
  private head = 0;
  private keep = false;
  private flushScheduled = false;
  /** The last entry appended as urgent, or expedited. */
  private urgentSeq = 0;
  /** The sender was told of every flushed entry up to here. */
  private dueSeq = 0;
  private cancelLazy: (() => void) | null = null;
  private readonly lazyMs: number;
  private readonly flushListeners = new Set<() => void>();
  private readonly dueListeners = new Set<() => void>();
  private readonly ackListeners = new Set<(ackedSeq: number) => void>();

  /**
   * @param options.lazyMs How long entries no answer waits for may wait for company before they
   *   are due to the sender. Default 2 ms: under load the next grant comes far sooner and carries
   *   them; idle, a release reaches the standby within 2 ms, and a release lost with its leader only
   *   keeps a lock until it lapses (DESIGN.md).
   */
  constructor(
    private readonly clock: ReplicationClock,
    options: { readonly lazyMs?: number | undefined } = {},
  ) {
    this.lazyMs = options.lazyMs ?? 2;
  }

  /** True while a standby follows the log and entries are kept until acknowledged. */
  get retaining(): boolean {
    return this.keep;
  }

  /** Hear the end of each turn that appended entries (the lateness watchdog). Answers the unsubscribe. */
  onFlush(listener: () => void): () => void {
    this.flushListeners.add(listener);
    return () => this.flushListeners.delete(listener);
  }

  /** Hear when flushed entries are due to the standby (the sender sends them). Answers the unsubscribe. */
  onDue(listener: () => void): () => void {
    this.dueListeners.add(listener);
    return () => this.dueListeners.delete(listener);
  }

  /** Hear every advance of the cumulative acknowledgement. Answers the unsubscribe. */
  onAck(listener: (ackedSeq: number) => void): () => void {
    this.ackListeners.add(listener);
    return () => this.ackListeners.delete(listener);
  }

  /**
   * Append `entry`; answers its sequence number. It is sent with the rest of this turn's entries:
   * at the end of the turn when `urgent` (an answer waits for it: the default), else when due
   * (see the class).
   */
  append(entry: E, urgent = true): number {
    const seq = ++this.lastSeq;
    if (urgent) this.urgentSeq = seq;
    if (this.keep) this.records.push({ seq, entry, at: this.clock.now() });
    if (!this.flushScheduled) {
      this.flushScheduled = true;
      this.clock.defer(() => this.flush());
    }
    return seq;
  }

  private flush(): void {
    this.flushScheduled = false;
    if (this.flushedSeq === this.lastSeq) return;
    this.flushedSeq = this.lastSeq;
    for (const listener of this.flushListeners) listener();
    if (this.urgentSeq > this.dueSeq) this.due();
    else this.cancelLazy ??= this.clock.setTimer(() => {
      this.cancelLazy = null;
      if (this.flushedSeq > this.dueSeq) this.due();
    }, this.lazyMs);
  }

  private due(): void {
    this.cancelLazy?.();
    this.cancelLazy = null;
    this.dueSeq = this.flushedSeq;
    for (const listener of this.dueListeners) listener();
  }

  /**
   * Someone waits for the standby to hold entry `seq` (a grant's answer, a hand-over): it and
   * everything before it are sent now rather than when due.
   */
  expedite(seq: number): void {
    if (seq > this.urgentSeq) this.urgentSeq = seq;
    if (seq > this.dueSeq && seq <= this.flushedSeq) this.due();
  }

  /**
   * Keep entries from now on (a standby is being sent a snapshot that holds everything up to
   * {@link lastSeq}); answers that sequence number, the snapshot's.
   */
  startRetaining(): number {
    this.keep = true;
    this.dropThrough(this.lastSeq);
    return this.lastSeq;
  }

  /** No standby follows any more: drop every kept entry and keep none until {@link startRetaining}. */
  stopRetaining(): void {
    this.keep = false;
    this.dropThrough(this.lastSeq);
  }

  /** The flushed entries after `seq` (at most `max`), for the sender. Empty when there are none. */
  since(seq: number, max = Infinity): LogBatch<E> {
    const entries: E[] = [];
    const first = this.records[this.head];
    if (first === undefined) return { fromSeq: seq, entries };
    // Kept records hold consecutive sequence numbers: index straight to the one after `seq`.
    let i = this.head + Math.max(0, seq + 1 - first.seq);
    const fromSeq = i < this.records.length ? this.records[i]!.seq - 1 : seq;
    for (; i < this.records.length && entries.length < max; i++) {
      const r = this.records[i]!;
      if (r.seq > this.flushedSeq) break;
      entries.push(r.entry);
    }
    return { fromSeq: entries.length === 0 ? seq : fromSeq, entries };
  }

  /**
   * The standby holds every entry up to `seq`. An older acknowledgement changes nothing; one beyond
   * the last entry appended is refused (a standby cannot hold what never existed). Answers true
   * when the acknowledgement advanced.
   */
  acknowledge(seq: number): boolean {
    if (seq > this.lastSeq) throw new RangeError(`acknowledgement ${seq} is beyond the last entry appended (${this.lastSeq})`);
    if (seq <= this.ackedSeq) return false;
    this.ackedSeq = seq;
    this.dropThrough(seq);
    for (const listener of this.ackListeners) listener(seq);
    return true;
  }

  /** Append time of the oldest kept entry not yet acknowledged, or `null` when there is none. */
  oldestUnackedAt(): number | null {
    const r = this.records[this.head];
    return r === undefined ? null : r.at;
  }

  /**
   * Append time of the oldest kept entry after `seq`, or `null` when none is kept: how long a
   * second standby (a standby move's, which holds up to `seq`) has kept an answer waiting.
   */
  oldestAfter(seq: number): number | null {
    const first = this.records[this.head];
    if (first === undefined) return null;
    const i = this.head + Math.max(0, seq + 1 - first.seq);
    return i < this.records.length ? this.records[i]!.at : null;
  }

  /** How far the standby is behind: kept entries not acknowledged, and the age of the oldest (ms). */
  lag(): { readonly entries: number; readonly ms: number } {
    const oldest = this.oldestUnackedAt();
    return { entries: this.records.length - this.head, ms: oldest === null ? 0 : Math.max(0, this.clock.now() - oldest) };
  }

  private dropThrough(seq: number): void {
    while (this.head < this.records.length && this.records[this.head]!.seq <= seq) this.head++;
    // Compact once the dropped prefix dominates, so memory follows what is kept.
    if (this.head > 1024 && this.head * 2 > this.records.length) {
      this.records = this.records.slice(this.head);
      this.head = 0;
    }
  }
}
