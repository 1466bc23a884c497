import { LeaseholdError } from "@leasehold/protocol";
import type { TimestampReserver } from "../timestamps/timestamp-reserver.js";
import type { DescriptorState } from "./descriptor-state.js";
import { HELD, type LockRequestState } from "./lock-request-state.js";

/**
 * Everything one namespace owns: its descriptors, live tokens, requestIds, waiting requests,
 * immutable-timestamp locks and its one counter (timestamps, transaction starts and fencing tokens
 * all come from it, so each is strictly greater than everything handed out before).
 */
export class NamespaceState {
  /** Descriptors with holders, queued requests or watchers. */
  readonly descriptors = new Map<string, DescriptorState>();
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

  /** The smallest start timestamp held by an immutable-timestamp lock, or undefined. */
  minImmutable(): number | undefined {
    const list = this.immutables;
    let head = this.immutableHead;
    while (head < list.length && (list[head] as LockRequestState).status !== HELD) head++;
    this.immutableHead = head;
    return list[head]?.startTimestamp;
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
