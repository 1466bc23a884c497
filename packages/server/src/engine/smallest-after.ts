/**
 * Collects the `limit` smallest distinct keys greater than `after` from an unordered stream, in
 * O(n log limit) time and O(limit) memory: a bounded max-heap whose top is the largest key kept,
 * so most candidates are refused by one comparison once it is full. This is how inspection pages
 * a hash map in key order without sorting or copying it (ADR 0006).
 */
export class SmallestAfter<T> {
  private readonly heap: { key: string; value: T }[] = [];
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
    if (heap.length === this.limit && key >= (heap[0] as { key: string }).key) return;
    if (this.kept.has(key)) return;
    if (heap.length < this.limit) {
      heap.push({ key, value });
      this.kept.add(key);
      this.up(heap.length - 1);
      return;
    }
    this.kept.delete((heap[0] as { key: string }).key);
    heap[0] = { key, value };
    this.kept.add(key);
    this.down(0);
  }

  /** The kept values, ascending by key. */
  sorted(): T[] {
    return this.heap
      .slice()
      .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
      .map((e) => e.value);
  }

  private up(i: number): void {
    const heap = this.heap;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if ((heap[parent] as { key: string }).key >= (heap[i] as { key: string }).key) return;
      [heap[parent], heap[i]] = [heap[i] as { key: string; value: T }, heap[parent] as { key: string; value: T }];
      i = parent;
    }
  }

  private down(i: number): void {
    const heap = this.heap;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let top = i;
      if (l < heap.length && (heap[l] as { key: string }).key > (heap[top] as { key: string }).key) top = l;
      if (r < heap.length && (heap[r] as { key: string }).key > (heap[top] as { key: string }).key) top = r;
      if (top === i) return;
      [heap[top], heap[i]] = [heap[i] as { key: string; value: T }, heap[top] as { key: string; value: T }];
      i = top;
    }
  }
}
