/** What the {@link LeaseQueue} needs of its entries: intrusive links and an expiry. */
export interface LeaseEntry<T> {
  leasePrev: T | null;
  leaseNext: T | null;
  /** When the lease lapses, on the engine's clock, rounded up to a whole millisecond (see {@link LeaseQueue.append}). */
  expiresAt: number;
}

/** One doubly linked list of entries, in expiry order. */
interface Run<T> {
  head: T | null;
  tail: T | null;
}

/**
 * Every live token in lease-expiry order. A grant or refresh gives a token the same duration, so
 * the order of last renewal is the order of expiry: a doubly linked list where a grant appends and
 * a refresh moves the entry to the back keeps it sorted with O(1) work, and reaping only ever looks
 * at the front, so it costs one step per lapsed token plus one, never a scan of everything held.
 * The links live in the entries themselves, so a held token costs no extra node object.
 *
 * A promoted table's carried leases are the one exception: they restart together at a duration of
 * their own, which may be longer than the table's (DESIGN.md "Carried leases"). They go to a second
 * list ({@link restart}), sorted too (one expiry for all of them), and the queue's head is the
 * earlier of the two lists' heads: a token granted after the promotion still lapses on time, not
 * behind the carried ones. A renewal never shortens a lease (a carried holder may believe the
 * earlier leader's longer promise), so a refreshed carried entry stays where it is until a
 * renewal would take it past its restart, and then joins the main list at the back.
 */
export class LeaseQueue<T extends LeaseEntry<T>> {
  /** The entry that lapses first (the earlier of the two lists' heads). */
  head: T | null = null;
  /** Entries in the queue. */
  size = 0;
  private readonly main: Run<T> = { head: null, tail: null };
  private readonly carried: Run<T> = { head: null, tail: null };

  /**
   * Add an entry (not already queued) that lapses at `expiresAt`, no earlier than any entry of the
   * main list. The time is kept rounded up to a whole millisecond: a lease then lasts a fraction
   * longer, never shorter, and the field stays a small integer V8 stores inline instead of a
   * 16-byte heap number.
   */
  append(entry: T, expiresAt: number): void {
    this.push(this.main, entry, expiresAt);
  }

  /**
   * Restart a queued entry's lease at `expiresAt` on the carried list (a promotion): every entry
   * restarted must be given the same time or a later one, and never again after a main-list append.
   */
  restart(entry: T, expiresAt: number): void {
    this.remove(entry);
    this.push(this.carried, entry, expiresAt);
  }

  /** Take an entry out of the queue. */
  remove(entry: T): void {
    const prev = entry.leasePrev;
    const next = entry.leaseNext;
    // An entry without a predecessor heads its list, one without a successor ends it.
    const run = prev === null ? (this.main.head === entry ? this.main : this.carried) : next === null ? (this.main.tail === entry ? this.main : this.carried) : null;
    if (prev === null) (run as Run<T>).head = next;
    else prev.leaseNext = next;
    if (next === null) (run as Run<T>).tail = prev;
    else next.leasePrev = prev;
    entry.leasePrev = null;
    entry.leaseNext = null;
    this.size--;
    this.settleHead();
  }

  /**
   * Renew an entry: it now lapses at `expiresAt`, after every other entry of the main list; a
   * lease already running longer (a carried one) is kept as it is.
   */
  renew(entry: T, expiresAt: number): void {
    if (Math.ceil(expiresAt) <= entry.expiresAt) return;
    if (this.main.tail !== entry) {
      this.remove(entry);
      this.append(entry, expiresAt);
    } else {
      entry.expiresAt = Math.ceil(expiresAt);
      // It may have been the head: a carried entry can now lapse first.
      this.settleHead();
    }
  }

  /** When the first entry lapses, or `Infinity` when empty. */
  nextExpiry(): number {
    return this.head === null ? Infinity : this.head.expiresAt;
  }

  private push(run: Run<T>, entry: T, expiresAt: number): void {
    entry.expiresAt = Math.ceil(expiresAt);
    entry.leaseNext = null;
    entry.leasePrev = run.tail;
    if (run.tail === null) run.head = entry;
    else run.tail.leaseNext = entry;
    run.tail = entry;
    this.size++;
    this.settleHead();
  }

  private settleHead(): void {
    const a = this.main.head;
    const b = this.carried.head;
    this.head = b === null || (a !== null && a.expiresAt <= b.expiresAt) ? a : b;
  }
}
