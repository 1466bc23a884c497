import type { LockSpec } from "@leasehold/protocol";
import { DescriptorState } from "./descriptor-state.js";
import { modeCode } from "./lock-mode-codes.js";
import { DONE, HELD, LockRequestState, WAITING } from "./lock-request-state.js";
import type { LockTable } from "./lock-table.js";
import type { NamespaceState } from "./namespace-state.js";
import type { PendingLock } from "./pending-lock.js";
import type { ReplicatedHold, ReplicatedQueuePlace, TokenImage, WaiterImage } from "./replication-entries.js";

// The replica's mutations: install what an entry or image says, deciding nothing. Unlike the
// leader's release paths (LockTable), nothing here ever grants a waiter: the leader's own entries
// say what its releases granted. Callers check fit first (replica-checks.ts); these never throw.

/** The descriptor of a hold or queue place, created when absent; a permit's live limit is set from it. */
function descriptorFor(ns: NamespaceState, place: ReplicatedHold | ReplicatedQueuePlace): DescriptorState {
  let d = ns.descriptors.get(place.descriptor);
  if (d === undefined) {
    d = new DescriptorState(place.descriptor, place.limit);
    ns.descriptors.set(place.descriptor, d);
  } else if (place.limit !== undefined) {
    d.limit = place.limit;
  }
  return d;
}

function retireIfIdle(ns: NamespaceState, d: DescriptorState): void {
  if (d.isIdle()) ns.retire(d);
}

/**
 * Set a descriptor's live limit, creating it (idle, kept like any idle descriptor) when absent: the
 * leader keeps idle descriptors with their limit, and a later take reuses them.
 */
export function setLimit(ns: NamespaceState, descriptor: string, limit: number): void {
  const d = descriptorFor(ns, { descriptor, mode: "permit", limit });
  retireIfIdle(ns, d);
}

/** Add holds `from`.. of `holds` to `req` (its earlier ones it has already). */
export function addHolds(table: LockTable, req: LockRequestState, holds: readonly ReplicatedHold[], from: number): void {
  const ns = req.namespace;
  for (let i = from; i < holds.length; i++) {
    const hold = holds[i] as ReplicatedHold;
    const d = descriptorFor(ns, hold);
    d.addHolder(modeCode(hold.mode));
    req.addHold(d, hold.fencingToken);
    ns.heldLocks++;
    table.heldLocks++;
    table.grantsTotal++;
  }
}

/** Specs that size a request's hold slots: its own, or (a lock without requestId) its holds. */
function slotSpecs(holds: readonly ReplicatedHold[]): LockSpec[] {
  return holds.map((h) => ({ descriptor: h.descriptor, mode: h.mode }));
}

/** Make `req` a live token `token`, granted `heldMs` ago, with a fresh lease (a promotion restarts it anyway). */
function makeLive(table: LockTable, req: LockRequestState, token: string, now: number, heldMs: number): void {
  req.status = HELD;
  req.token = token;
  req.grantedAt = Math.floor(now - heldMs);
  req.namespace.tokens.set(token, req);
  table.leases.append(req, now + table.leaseMs);
}

/** Install a live token from its image (a grant entry or an image's token). */
export function installToken(table: LockTable, ns: NamespaceState, t: TokenImage, now: number, heldMs: number): void {
  if (t.kind === "immutable") {
    const lock = new LockRequestState(ns, null, undefined, true, 0);
    lock.startTimestamp = t.startTimestamp;
    makeLive(table, lock, t.token, now, heldMs);
    lock.arrivedAt = lock.grantedAt;
    ns.addImmutable(lock);
    return;
  }
  if (t.kind === "timestamp-lease") {
    const lease = new LockRequestState(ns, null, t.requestId, true, t.count);
    lease.leaseName = t.name;
    lease.leased = t.leased;
    makeLive(table, lease, t.token, now, heldMs);
    lease.arrivedAt = lease.grantedAt;
    ns.addLease(lease);
    if (t.requestId !== undefined) ns.requests.set(t.requestId, lease);
    return;
  }
  const req = new LockRequestState(ns, t.specs ?? slotSpecs(t.holds), t.requestId, t.allOrNone, t.max);
  addHolds(table, req, t.holds, 0);
  req.trimHolds();
  if (t.requestId === undefined) req.specs = null;
  req.clientDescription = t.clientDescription;
  makeLive(table, req, t.token, now, heldMs);
  req.arrivedAt = req.grantedAt - t.waitedMs;
  if (t.requestId !== undefined) ns.requests.set(t.requestId, req);
}

/** Finish the grant of a waiter the leader granted: it leaves every queue and becomes `token`. */
export function grantWaiter(table: LockTable, req: LockRequestState, holds: readonly ReplicatedHold[], token: string, now: number): void {
  const ns = req.namespace;
  const pending = req.pending as PendingLock;
  leaveQueues(table, req, pending);
  addHolds(table, req, holds, req.heldCount);
  req.trimHolds();
  if (req.requestId === undefined) req.specs = null;
  makeLive(table, req, token, now, 0);
  req.pending = null;
  ns.replicaWaiters?.delete(pending.waitSerial);
}

/** Take a waiter out of the deadline heap, the waiting set, its queue and its watch lists. */
function leaveQueues(table: LockTable, req: LockRequestState, pending: PendingLock): void {
  const ns = req.namespace;
  table.deadlines.remove(pending);
  ns.waiting.delete(req);
  const queuedOn = pending.queuedOn;
  if (queuedOn !== null) {
    queuedOn.dequeue(pending);
    retireIfIdle(ns, queuedOn);
  }
  if (pending.watching) table.unwatch(req);
}

/** Release a request's holds without granting anyone (the leader's entries say who got them). */
function dropHolds(table: LockTable, req: LockRequestState): void {
  const ns = req.namespace;
  const n = req.heldCount;
  table.heldLocks -= n;
  ns.heldLocks -= n;
  for (let i = 0; i < n; i++) req.heldAt(i).removeHolder();
  for (let i = 0; i < n; i++) retireIfIdle(ns, req.heldAt(i));
}

/** End a live token (the leader's unlock, lapse or revoke). */
export function releaseReplicaToken(table: LockTable, req: LockRequestState): void {
  const ns = req.namespace;
  req.status = DONE;
  ns.tokens.delete(req.token);
  table.leases.remove(req);
  ns.forgetRequestId(req);
  if (req.leaseName !== undefined) ns.releasedLease(req);
  else if (req.startTimestamp !== 0) ns.releasedImmutable();
  else dropHolds(table, req);
}

/** End a waiter without a grant (timeout, abandonment, revoke, a wait that passed). */
export function endReplicaWaiter(table: LockTable, req: LockRequestState): void {
  const ns = req.namespace;
  const pending = req.pending as PendingLock;
  req.status = DONE;
  leaveQueues(table, req, pending);
  ns.forgetRequestId(req);
  dropHolds(table, req);
  req.pending = null;
  ns.replicaWaiters?.delete(pending.waitSerial);
}

/**
 * Install a new waiter from its image; it joins the back of its queue when `enqueue` (an image
 * queues its waiters afterwards, in each queue's own order).
 */
export function installWaiter(table: LockTable, ns: NamespaceState, w: WaiterImage, now: number, enqueue: boolean): LockRequestState {
  // The leader's arrival brought every permit descriptor of the request into its map with the
  // request's limit (kept while idle); one the replica lacks is made the same way.
  for (const spec of w.specs) if (spec.limit !== undefined && !ns.descriptors.has(spec.descriptor)) setLimit(ns, spec.descriptor, spec.limit);
  const req = new LockRequestState(ns, w.specs, w.requestId, w.allOrNone, w.max);
  req.waitOnly = w.waitOnly;
  req.clientDescription = w.clientDescription;
  req.arrivedAt = Math.floor(now - w.waitedMs);
  req.nextIndex = w.nextIndex;
  req.status = WAITING;
  addHolds(table, req, w.holds, 0);
  const pending = req.waiter();
  pending.waitSerial = w.serial;
  pending.deadline = Math.ceil(now + w.remainingMs);
  table.deadlines.push(pending);
  if (w.watching) table.watch(req);
  if (enqueue && w.queuedOn !== undefined) queueOn(ns, pending, w.queuedOn);
  ns.waiting.add(req);
  if (w.requestId !== undefined) ns.requests.set(w.requestId, req);
  (ns.replicaWaiters ??= new Map()).set(w.serial, req);
  return req;
}

/** Put a waiter at the back of a descriptor's queue. */
export function queueOn(ns: NamespaceState, pending: PendingLock, place: ReplicatedQueuePlace): void {
  descriptorFor(ns, place).enqueue(pending, modeCode(place.mode));
}

/** Install a waiting request's new state: new holds, its new queue place, its new deadline. */
export function updateWaiter(table: LockTable, req: LockRequestState, w: WaiterImage, now: number): void {
  const ns = req.namespace;
  const pending = req.pending as PendingLock;
  addHolds(table, req, w.holds, req.heldCount);
  req.nextIndex = w.nextIndex;
  const was = pending.queuedOn;
  const place = w.queuedOn;
  if (was !== null && (place === undefined || was.key !== place.descriptor)) {
    was.dequeue(pending);
    retireIfIdle(ns, was);
  }
  if (place !== undefined && (was === null || was.key !== place.descriptor)) queueOn(ns, pending, place);
  else if (place?.limit !== undefined && was !== null) was.limit = place.limit;
  pending.deadline = Math.ceil(now + w.remainingMs);
  table.deadlines.update(pending);
}
