import type { StartedTransaction } from "@leasehold/protocol";
import { HELD, LockRequestState } from "./lock-request-state.js";
import type { LockTable } from "./lock-table.js";
import type { NamespaceState } from "./namespace-state.js";
import { grantEntry } from "./replication-emit.js";

// Tokens that hold no descriptor: immutable-timestamp locks (`transactions/start`) and timestamp
// leases. Each gets a token from the table and a lease in its lease queue, and is replicated as a
// grant, like a lock.

/**
 * Hold `count` immutable-timestamp locks, one per transaction starting at `first`, `first + 1`,
 * ...: each gets a token and a lease, and no descriptor.
 */
export function holdImmutable(table: LockTable, ns: NamespaceState, first: number, count: number, now: number): StartedTransaction[] {
  const transactions: StartedTransaction[] = new Array<StartedTransaction>(count);
  for (let i = 0; i < count; i++) {
    const lock = new LockRequestState(ns, null, undefined, true, 0);
    lock.startTimestamp = first + i;
    lock.arrivedAt = lock.grantedAt = Math.floor(now);
    lock.status = HELD;
    lock.token = table.mint(ns);
    ns.tokens.set(lock.token, lock);
    ns.addImmutable(lock);
    table.leases.append(lock, now + table.leaseMs);
    if (table.sink !== null) table.sink(ns.name, grantEntry(lock, null));
    transactions[i] = { startTimestamp: lock.startTimestamp, token: lock.token };
  }
  return transactions;
}

/**
 * Hold `leased` under the lease name `name` with a new token and lease (`timestamp-leases`); the
 * request keeps `count` (as `max`) so a retry with its `requestId` can be checked against it.
 */
export function holdLease(table: LockTable, ns: NamespaceState, name: string, leased: number, count: number, requestId: string | undefined, now: number): LockRequestState {
  const lease = new LockRequestState(ns, null, requestId, true, count);
  lease.leaseName = name;
  lease.leased = leased;
  lease.arrivedAt = lease.grantedAt = Math.floor(now);
  lease.status = HELD;
  lease.token = table.mint(ns);
  ns.tokens.set(lease.token, lease);
  ns.addLease(lease);
  if (requestId !== undefined) ns.requests.set(requestId, lease);
  table.leases.append(lease, now + table.leaseMs);
  if (table.sink !== null) table.sink(ns.name, grantEntry(lease, null));
  return lease;
}
