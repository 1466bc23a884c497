/** What the {@link DeadlineHeap} needs of its items: a deadline and a slot for its own index. */
export interface DeadlineItem {
  /** When the item is due, on the engine's clock. */
  deadline: number;
  /** Position in the heap, -1 when not in it; owned by the heap. */
  heapIndex: number;
  /**
   * Breaks ties: of equal deadlines, the smaller is due first. Without it the order of equal
   * deadlines would depend on the heap's history, and a replica (whose heap is built in another
   * order) could time out two waiters in another order than its leader. Waiters use their serial.
   */
  readonly waitSerial: number;
}

/** True when `a` is due before `b`. */
function before(a: DeadlineItem, b: DeadlineItem): boolean {
  return a.deadline < b.deadline || (a.deadline === b.deadline && a.waitSerial < b.waitSerial);
}

/**
 * A binary min-heap of items by deadline, indexed (every item knows its slot) so that removing a
 * waiter granted before its deadline, or moving a deadline when a retry extends it, is O(log n)
 * and leaves no stale entries behind to sift through later.
 */
export class DeadlineHeap<T extends DeadlineItem> {
  private readonly items: T[] = [];

  /** Items in the heap. */
  get size(): number {
    return this.items.length;
  }

  /** The earliest item, or undefined. */
  peek(): T | undefined {
    return this.items[0];
  }

  /** The earliest deadline, or `Infinity` when empty. */
  nextDeadline(): number {
    const top = this.items[0];
    return top === undefined ? Infinity : top.deadline;
  }

  /** Add an item (not already in the heap). */
  push(item: T): void {
    item.heapIndex = this.items.length;
    this.items.push(item);
    this.up(item.heapIndex);
  }

  /** Remove and return the earliest item. */
  pop(): T | undefined {
    const top = this.items[0];
    if (top !== undefined) this.remove(top);
    return top;
  }

  /** Remove an item if it is in the heap. */
  remove(item: T): void {
    const i = item.heapIndex;
    if (i < 0) return;
    const last = this.items.pop() as T;
    item.heapIndex = -1;
    if (last === item) return;
    this.items[i] = last;
    last.heapIndex = i;
    this.update(last);
  }

  /** Restore order after `item.deadline` changed. */
  update(item: T): void {
    if (item.heapIndex < 0) return;
    this.up(item.heapIndex);
    this.down(item.heapIndex);
  }

  /** Every item, in no particular order. */
  values(): readonly T[] {
    return this.items;
  }

  /** Forget every item. */
  clear(): void {
    for (const item of this.items) item.heapIndex = -1;
    this.items.length = 0;
  }

  private up(i: number): void {
    const items = this.items;
    const item = items[i] as T;
    while (i > 0) {
      const p = (i - 1) >> 1;
      const parent = items[p] as T;
      if (!before(item, parent)) break;
      items[i] = parent;
      parent.heapIndex = i;
      i = p;
    }
    items[i] = item;
    item.heapIndex = i;
  }

  private down(i: number): void {
    const items = this.items;
    const n = items.length;
    const item = items[i] as T;
    for (;;) {
      let c = 2 * i + 1;
      if (c >= n) break;
      const right = c + 1;
      if (right < n && before(items[right] as T, items[c] as T)) c = right;
      const child = items[c] as T;
      if (!before(child, item)) break;
      items[i] = child;
      child.heapIndex = i;
      i = c;
    }
    items[i] = item;
    item.heapIndex = i;
  }
}
