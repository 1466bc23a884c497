import { HELD, type LockRequestState } from "./lock-request-state.js";

/**
 * The timestamps held under one lease name of a namespace (`timestamp-leases`), in the order they
 * were leased, which is ascending: each lease takes a fresh timestamp from the namespace's one
 * counter. So the smallest held is the first live entry. Released entries are skipped at the front
 * and compacted away once they outnumber the live ones, as the immutable-timestamp locks are
 * (`NamespaceState`), which keeps acquiring, releasing and `min` O(1) amortised.
 */
export class LeasedTimestamps {
  private entries: LockRequestState[] = [];
  private head = 0;
  /** Live leases under the name. */
  live = 0;

  /** Record a new lease; its timestamp is above every earlier one of the namespace. */
  add(lease: LockRequestState): void {
    this.entries.push(lease);
    this.live++;
  }

  /** Note that one of its leases was released (unlock, lapse, revoke). */
  released(): void {
    this.live--;
    const dead = this.entries.length - this.live;
    if (dead > 1024 && dead > this.live) {
      this.entries = this.entries.filter((lease) => lease.status === HELD);
      this.head = 0;
    }
  }

  /** The smallest timestamp held under the name, or undefined when none is. */
  min(): number | undefined {
    const list = this.entries;
    let head = this.head;
    while (head < list.length && (list[head] as LockRequestState).status !== HELD) head++;
    this.head = head;
    return list[head]?.leased;
  }
}
