import { LeaseholdError } from "@leasehold/protocol";
import type { TimestampReserver } from "./timestamp-reserver.js";
import type { DescriptorState } from "./descriptor-state.js";
import { HELD, type LockRequestState } from "./lock-request-state.js";
import { LeasedTimestamps } from "./leased-timestamps.js";
import type { CarriedWatch } from "./carried-watch.js";
import type { LockWatchLog } from "./lock-watch-log.js";

/**
 * How many idle descriptors a namespace keeps in its map before evicting the oldest. 8,192 × about
 * 150 bytes is 1.2 MiB per busy namespace at most, against a hot-key slowdown without it.
 */
export const IDLE_DESCRIPTORS = 8192;

/**
 * Everything one namespace owns: its descriptors, live tokens, requestIds, waiting requests,
 * immutable-timestamp locks and its one counter (timestamps, transaction starts and fencing tokens
 * all come from it, so each is strictly greater than everything handed out before).
 */
export class NamespaceState {
  /**
   * Descriptors with holders, queued requests or watchers, plus up to {@link IDLE_DESCRIPTORS}
   * recently idle ones (see {@link retire}).
   */
  readonly descriptors = new Map<string, DescriptorState>();
  /** Idle descriptors still in the map, oldest first (a queue: array plus head index). */
  private idle: DescriptorState[] = [];
  private idleHead = 0;
  /** Live tokens: granted lock requests and immutable-timestamp locks. */
  readonly tokens = new Map<string, LockRequestState>();
  /** requestIds of requests waiting or held. */
  readonly requests = new Map<string, LockRequestState>();
  /** Requests waiting now. */
  readonly waiting = new Set<LockRequestState>();
  /**
   * Immutable-timestamp locks in the order they were started, which is ascending start timestamp,
   * so the smallest live one is the first live entry. Released entries are skipped at the front
   * and compacted away once they outnumber the live ones, which keeps both O(1) amortised.
   */
  private immutables: LockRequestState[] = [];
  private immutableHead = 0;
  /** Live immutable-timestamp locks. */
  immutableCount = 0;
  /** Timestamp leases by name; a name is dropped once nothing is held under it. */
  readonly leases = new Map<string, LeasedTimestamps>();
  /** Descriptor holds in this namespace (waiting all-or-none requests' partial holds included). */
  heldLocks = 0;
  /**
   * The lock-event log, once anything registered a lock watch here (PROTOCOL.md "Lock watches").
   * Null until then, so grants and releases in an unwatched namespace pay one null check.
   */
  watchLog: LockWatchLog | null = null;
  /** A replica's account of the leader's {@link watchLog} (carried-watch.ts), until promoted; null otherwise. */
  carriedWatch: CarriedWatch | null = null;
  /** The next counter value. */
  private next: number;
  /** Highest counter value the reserver has made durable. */
  private bound: number;

  constructor(
    readonly name: string,
    private readonly reserver: TimestampReserver,
  ) {
    const floor = reserver.floor(name);
    this.next = floor + 1;
    this.bound = floor;
  }

  /**
   * Note that `d` has become idle. It stays in the map until {@link IDLE_DESCRIPTORS} later idle
   * descriptors push it out, and only leaves then if still idle. Why not delete at once: V8's Map
   * keeps deleted entries in their hash chain until the table is rebuilt, and a big table is
   * rebuilt rarely, so a hot descriptor locked and released over and over next to a million held
   * locks grew a chain of thousands of dead entries, and grant and release slowed twentyfold
   * (measured). Keeping recently idle descriptors makes a hot one a plain lookup; evicting only
   * the oldest keeps memory bounded by what is held plus the window.
   */
  retire(d: DescriptorState): void {
    if (d.retired) return;
    d.retired = true;
    this.idle.push(d);
    if (this.idle.length - this.idleHead <= IDLE_DESCRIPTORS) return;
    const oldest = this.idle[this.idleHead] as DescriptorState;
    this.idle[this.idleHead++] = undefined as unknown as DescriptorState;
    oldest.retired = false;
    if (oldest.isIdle() && this.descriptors.get(oldest.key) === oldest) this.descriptors.delete(oldest.key);
    if (this.idleHead > 4096 && this.idleHead * 2 > this.idle.length) {
      this.idle = this.idle.slice(this.idleHead);
      this.idleHead = 0;
    }
  }

  /** Descriptors kept in the map although idle (a diagnostic for tests). */
  get idleKept(): number {
    let n = 0;
    for (let i = this.idleHead; i < this.idle.length; i++) if ((this.idle[i] as DescriptorState).isIdle()) n++;
    return n;
  }

  /** The next number the counter would hand out. */
  get nextValue(): number {
    return this.next;
  }

  /**
   * Make sure `count` more numbers can be handed out without asking the reserver. Called before a
   * request changes any state, so that a reserver failure (a disk error) changes nothing.
   */
  ensureHeadroom(count: number): void {
    const last = this.next + count - 1;
    if (last > this.bound) this.bound = this.reserver.reserve(this.name, last);
  }

  /** Hand out `count` consecutive numbers; returns the first. */
  take(count: number): number {
    const first = this.next;
    if (first + count - 1 > this.bound) this.ensureHeadroom(count);
    if (first + count - 1 > Number.MAX_SAFE_INTEGER) {
      throw new LeaseholdError("UNAVAILABLE", `namespace ${this.name} has used every safe integer timestamp`);
    }
    this.next = first + count;
    return first;
  }

  /**
   * Move the counter up to `next`, never down (a replica copying its leader's counter). The bound
   * is not touched: the first hand-out above it asks the reserver, as always.
   */
  raiseCounter(next: number): void {
    if (next > this.next) this.next = next;
  }

  /** Start timestamp of the newest immutable-timestamp lock ever recorded (0 if none): a new one must be above it. */
  get lastImmutableStart(): number {
    return this.immutables[this.immutables.length - 1]?.startTimestamp ?? 0;
  }

  /**
   * Waiting requests by wait serial, kept only while the table is a replica (entries name waiters
   * by serial); null otherwise.
   */
  replicaWaiters: Map<number, LockRequestState> | null = null;

  /** Record a new immutable-timestamp lock; its start timestamp is above every earlier one. */
  addImmutable(lock: LockRequestState): void {
    this.immutables.push(lock);
    this.immutableCount++;
  }

  /** Note that an immutable-timestamp lock was released. */
  releasedImmutable(): void {
    this.immutableCount--;
    const dead = this.immutables.length - this.immutableCount;
    if (dead > 1024 && dead > this.immutableCount) {
      this.immutables = this.immutables.filter((lock) => lock.status === HELD);
      this.immutableHead = 0;
    }
  }

  /** Forget `req`'s requestId, if it still names `req` (a later request may hold it by now). */
  forgetRequestId(req: LockRequestState): void {
    if (req.requestId !== undefined && this.requests.get(req.requestId) === req) this.requests.delete(req.requestId);
  }

  /** Record a new timestamp lease under its name. */
  addLease(lease: LockRequestState): void {
    const name = lease.leaseName as string;
    let held = this.leases.get(name);
    if (held === undefined) this.leases.set(name, (held = new LeasedTimestamps()));
    held.add(lease);
  }

  /** Note that a timestamp lease was released; forget its name once nothing is held under it. */
  releasedLease(lease: LockRequestState): void {
    const name = lease.leaseName as string;
    const held = this.leases.get(name);
    if (held === undefined) return;
    held.released();
    if (held.live === 0) this.leases.delete(name);
  }

  /** The smallest timestamp held under `name`, or undefined. */
  minLeased(name: string): number | undefined {
    return this.leases.get(name)?.min();
  }

  /** The smallest timestamp held under any lease name, or undefined (O(names)). */
  minLeasedAny(): number | undefined {
    let min: number | undefined;
    for (const held of this.leases.values()) {
      const m = held.min();
      if (m !== undefined && (min === undefined || m < min)) min = m;
    }
    return min;
  }

  /** The smallest start timestamp held by an immutable-timestamp lock, or undefined. */
  minImmutable(): number | undefined {
    const list = this.immutables;
    let head = this.immutableHead;
    while (head < list.length && (list[head] as LockRequestState).status !== HELD) head++;
    this.immutableHead = head;
    return list[head]?.startTimestamp;
  }

  /**
   * Up to `limit` live immutable-timestamp locks with a start timestamp above `after`, ascending.
   * The list is sorted by start timestamp, so a binary search finds the place: a page costs
   * O(log n + limit + released entries skipped), never a walk of every lock.
   */
  immutablesAfter(after: number, limit: number): LockRequestState[] {
    const list = this.immutables;
    let lo = this.immutableHead;
    let hi = list.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((list[mid] as LockRequestState).startTimestamp <= after) lo = mid + 1;
      else hi = mid;
    }
    const out: LockRequestState[] = [];
    for (let i = lo; i < list.length && out.length < limit; i++) {
      const lock = list[i] as LockRequestState;
      if (lock.status === HELD) out.push(lock);
    }
    return out;
  }

  /** Start timestamps of live immutable-timestamp locks, ascending. */
  liveImmutables(): number[] {
    const out: number[] = [];
    for (let i = this.immutableHead; i < this.immutables.length; i++) {
      const lock = this.immutables[i] as LockRequestState;
      if (lock.status === HELD) out.push(lock.startTimestamp);
    }
    return out;
  }
}
