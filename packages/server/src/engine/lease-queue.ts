/** What the {@link LeaseQueue} needs of its entries: intrusive links and an expiry. */
export interface LeaseEntry<T> {
  leasePrev: T | null;
  leaseNext: T | null;
  /** When the lease lapses, on the engine's clock, rounded up to a whole millisecond (see {@link LeaseQueue.append}). */
  expiresAt: number;
}

/**
 * Every live token in lease-expiry order. The lease duration is the same for every token, so the
 * order of last renewal is the order of expiry: a doubly linked list where a grant appends and a
 * refresh moves the entry to the back keeps it sorted with O(1) work, and reaping only ever looks
 * at the front, so it costs one step per lapsed token plus one, never a scan of everything held.
 * The links live in the entries themselves, so a held token costs no extra node object.
 */
export class LeaseQueue<T extends LeaseEntry<T>> {
  /** The entry that lapses first. */
  head: T | null = null;
  private tail: T | null = null;
  /** Entries in the queue. */
  size = 0;

  /**
   * Add an entry (not already queued) that lapses at `expiresAt`, no earlier than any queued one.
   * The time is kept rounded up to a whole millisecond: a lease then lasts a fraction longer, never
   * shorter, and the field stays a small integer V8 stores inline instead of a 16-byte heap number.
   */
  append(entry: T, expiresAt: number): void {
    entry.expiresAt = Math.ceil(expiresAt);
    entry.leaseNext = null;
    entry.leasePrev = this.tail;
    if (this.tail === null) this.head = entry;
    else this.tail.leaseNext = entry;
    this.tail = entry;
    this.size++;
  }

  /** Take an entry out of the queue. */
  remove(entry: T): void {
    const prev = entry.leasePrev;
    const next = entry.leaseNext;
    if (prev === null) this.head = next;
    else prev.leaseNext = next;
    if (next === null) this.tail = prev;
    else next.leasePrev = prev;
    entry.leasePrev = null;
    entry.leaseNext = null;
    this.size--;
  }

  /** Renew an entry: it now lapses at `expiresAt`, after every other queued entry. */
  renew(entry: T, expiresAt: number): void {
    if (this.tail !== entry) {
      this.remove(entry);
      this.append(entry, expiresAt);
    } else {
      entry.expiresAt = Math.ceil(expiresAt);
    }
  }

  /** When the first entry lapses, or `Infinity` when empty. */
  nextExpiry(): number {
    return this.head === null ? Infinity : this.head.expiresAt;
  }
}
