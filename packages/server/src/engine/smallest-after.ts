/** One kept candidate. */
interface Entry<T> {
  readonly key: string;
  readonly value: T;
}

/**
 * Collects the `limit` smallest distinct keys greater than `after` from an unordered stream, in
 * O(n log limit) time and O(limit) memory: a bounded max-heap whose top is the largest key kept,
 * so most candidates are refused by one comparison once it is full. This is how inspection pages
 * a hash map in key order without sorting or copying it (ADR 0006).
 */
export class SmallestAfter<T> {
  private readonly heap: Entry<T>[] = [];
  private readonly kept = new Set<string>();

  /**
   * @param after Only keys strictly greater than this are kept; undefined: every key.
   * @param limit How many of the smallest keys to keep (at least 1).
   */
  constructor(
    private readonly after: string | undefined,
    private readonly limit: number,
  ) {}

  /** Offer one candidate; a key already kept is ignored. */
  offer(key: string, value: T): void {
    if (this.after !== undefined && key <= this.after) return;
    const heap = this.heap;
    const top = heap[0];
    if (heap.length === this.limit && top !== undefined && key >= top.key) return;
    if (this.kept.has(key)) return;
    this.kept.add(key);
    if (heap.length < this.limit) {
      heap.push({ key, value });
      this.up(heap.length - 1);
      return;
    }
    if (top !== undefined) this.kept.delete(top.key);
    heap[0] = { key, value };
    this.down(0);
  }

  /** The kept values, ascending by key. */
  sorted(): T[] {
    return this.heap
      .slice()
      .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
      .map((e) => e.value);
  }

  private at(i: number): Entry<T> {
    return this.heap[i] as Entry<T>;
  }

  private swap(i: number, j: number): void {
    const a = this.at(i);
    this.heap[i] = this.at(j);
    this.heap[j] = a;
  }

  private up(i: number): void {
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (this.at(parent).key >= this.at(i).key) return;
      this.swap(parent, i);
      i = parent;
    }
  }

  private down(i: number): void {
    const n = this.heap.length;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let top = i;
      if (l < n && this.at(l).key > this.at(top).key) top = l;
      if (r < n && this.at(r).key > this.at(top).key) top = r;
      if (top === i) return;
      this.swap(top, i);
      i = top;
    }
  }
}
