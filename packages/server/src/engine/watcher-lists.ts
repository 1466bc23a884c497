import type { DescriptorState } from "./descriptor-state.js";
import { EXCLUSIVE, PERMIT } from "./lock-mode-codes.js";
import type { LockRequestState } from "./lock-request-state.js";

/**
 * The as-many-as-possible requests watching one descriptor, indexed by the mode they want: one
 * list per mode code, each in arrival order (a `Map` keeps insertion order) with the request's
 * arrival number. A release asks for the earliest watcher the descriptor can now be granted to,
 * which looks at the head of at most three lists: watchers that cannot be granted are never
 * visited. A single list scanned on every release cost O(watchers) per release (112.6 µs per
 * shared release with 10,000 exclusive watchers, against 8.5 µs with 10; issue 13).
 */
export class WatcherLists {
  /** Watchers per mode code (exclusive, shared, permit), by arrival. */
  readonly #byMode: [Map<LockRequestState, number> | null, Map<LockRequestState, number> | null, Map<LockRequestState, number> | null] = [
    null,
    null,
    null,
  ];
  /** Arrival numbers, so the earliest watcher across the modes goes first. */
  #arrivals = 0;
  /** Watchers in all lists. */
  size = 0;

  /** Add `request`, which wants the descriptor in `mode`, after every earlier watcher. */
  add(request: LockRequestState, mode: number): void {
    const list = (this.#byMode[mode as 0 | 1 | 2] ??= new Map());
    if (list.has(request)) return;
    list.set(request, this.#arrivals++);
    this.size++;
  }

  /** Remove `request`; returns false when it was not watching. */
  delete(request: LockRequestState): boolean {
    const lists = this.#byMode;
    for (let mode = 0; mode < 3; mode++) {
      const list = lists[mode as 0 | 1 | 2];
      if (list !== null && list.delete(request)) {
        if (list.size === 0) lists[mode as 0 | 1 | 2] = null;
        this.size--;
        return true;
      }
    }
    return false;
  }

  /**
   * The watcher that arrived first among those whose mode `d` is compatible with right now, or
   * null: O(1), whatever the number of watchers that cannot be granted.
   */
  firstGrantable(d: DescriptorState): LockRequestState | null {
    let best: LockRequestState | null = null;
    let bestArrival = Infinity;
    const lists = this.#byMode;
    for (let mode = EXCLUSIVE; mode <= PERMIT; mode++) {
      const list = lists[mode as 0 | 1 | 2];
      if (list === null || !d.compatible(mode)) continue;
      const first = list.entries().next().value as [LockRequestState, number];
      if (first[1] < bestArrival) {
        best = first[0];
        bestArrival = first[1];
      }
    }
    return best;
  }
}
