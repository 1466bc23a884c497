import { EXCLUSIVE, NO_MODE, SHARED } from "./lock-mode-codes.js";
import type { LockRequestState } from "./lock-request-state.js";
import type { PendingLock } from "./pending-lock.js";
import { WatcherLists } from "./watcher-lists.js";

/**
 * One descriptor in use: who holds it (as a mode and a count: the holders themselves are only
 * needed by snapshots, which find them through the tokens) and who waits for it. It exists while
 * it has holders, queued requests or watchers, and is dropped from its namespace when it has none.
 */
export class DescriptorState {
  /** The descriptor. */
  readonly key: string;
  /** Mode of the current holders, {@link NO_MODE} when none. */
  holderMode = NO_MODE;
  /** Number of current holders. */
  holderCount = 0;
  /** Live permit limit: set by the newest request with a permit on this descriptor. */
  limit: number;
  /** First all-or-none request queued here (FIFO, intrusive links in the requests' waiting state). */
  queueHead: PendingLock | null = null;
  /** Last queued request. */
  queueTail: PendingLock | null = null;
  /** True while it sits in its namespace's queue of idle descriptors (see `NamespaceState.retire`). */
  retired = false;
  /** as-many-as-possible requests waiting for this descriptor to be grantable, by mode; null when none. */
  watchers: WatcherLists | null = null;

  /**
   * @param key The descriptor.
   * @param limit The permit limit of the request that brings it into use (1 for other modes).
   */
  constructor(key: string, limit = 1) {
    // A descriptor built by concatenation (`rowLock("orders", id)`, a template literal) is a V8
    // cons string: a 32-byte node over its parts (another 24+ bytes each). Reading a character
    // flattens it in place into one sequential string, and the garbage collector then points every
    // reference at that string and drops the node, about 25 bytes less per held lock. A descriptor
    // parsed from JSON is flat already and this costs it one character read.
    key.charCodeAt(0);
    this.key = key;
    this.limit = limit;
  }

  /** True when a request in `mode` may join the current holders (the queue not considered). */
  compatible(mode: number): boolean {
    const count = this.holderCount;
    if (count === 0) return true;
    if (mode !== this.holderMode || mode === EXCLUSIVE) return false;
    return mode === SHARED || count < this.limit;
  }

  /** True when a new request in `mode` may take it now: compatible and nobody queued ahead. */
  grantableNow(mode: number): boolean {
    return this.queueHead === null && this.compatible(mode);
  }

  /** True when nothing refers to it any more, so its namespace can forget it. */
  isIdle(): boolean {
    return this.holderCount === 0 && this.queueHead === null && this.watchers === null;
  }

  /** Record one more holder in `mode`. */
  addHolder(mode: number): void {
    this.holderMode = mode;
    this.holderCount++;
  }

  /** Record one holder fewer. */
  removeHolder(): void {
    if (--this.holderCount === 0) this.holderMode = NO_MODE;
  }

  /** Queue a request at the back, waiting for this descriptor in `mode`. */
  enqueue(request: PendingLock, mode: number): void {
    request.queuedOn = this;
    request.queueMode = mode;
    request.queueNext = null;
    request.queuePrev = this.queueTail;
    if (this.queueTail === null) this.queueHead = request;
    else this.queueTail.queueNext = request;
    this.queueTail = request;
  }

  /** Take a queued request out of the queue, wherever it is. */
  dequeue(request: PendingLock): void {
    const prev = request.queuePrev;
    const next = request.queueNext;
    if (prev === null) this.queueHead = next;
    else prev.queueNext = next;
    if (next === null) this.queueTail = prev;
    else next.queuePrev = prev;
    request.queuePrev = null;
    request.queueNext = null;
    request.queuedOn = null;
  }

  /** Start watching for `request`, which wants this descriptor in `mode`. */
  watch(request: LockRequestState, mode: number): void {
    (this.watchers ??= new WatcherLists()).add(request, mode);
  }

  /** Stop watching for `request`. */
  unwatch(request: LockRequestState): void {
    const watchers = this.watchers;
    if (watchers !== null && watchers.delete(request) && watchers.size === 0) this.watchers = null;
  }
}
