import {
  LeaseholdError,
  type Lease,
  type LockSpec,
  type TimestampLeaseRequest,
  type TimestampLeaseResponse,
  type WaitForLocksRequest,
  type WaitForLocksResponse,
} from "@leasehold/protocol";
import { HELD, LockRequestState, WAITING } from "./lock-request-state.js";
import { WAIT_FREE, type LockTable } from "./lock-table.js";
import { allGrantableNow } from "./spec-descriptors.js";
import { holdLease } from "./token-holds.js";
import type { NamespaceState } from "./namespace-state.js";
import { PendingLock } from "./pending-lock.js";
import type { ReapTally } from "./reap-due.js";
import { sameIdentity, sortedSpecs } from "./request-identity.js";
import { tooManyWaiting } from "./too-many-waiting.js";
import { waiterEntry } from "./replication-emit.js";
import { WAIT_TIMEOUT } from "./timeout-answers.js";

// `wait-for-locks` and `timestamp-leases` for `LockEngine`, which calls these after its catch-up.

/** What {@link beginWait} needs of the engine besides the table. */
export interface WaitLimits {
  readonly maxWaitingPerNamespace: number;
  readonly tally: ReapTally;
  /** The next wait serial (the watchers view's cursor). */
  readonly nextSerial: () => number;
}

/**
 * Start a wait (see `LockEngine.waitForLocks`): `free` or `timeout` at once when it can, leaving no
 * trace, else queued as an all-or-none lock request would be, behind everyone queued before it.
 */
export function beginWait(table: LockTable, ns: NamespaceState, request: WaitForLocksRequest, now: number, limits: WaitLimits): WaitForLocksResponse | PendingLock {
  const specs = sortedSpecs(request.locks as readonly LockSpec[]);
  const timeoutMs = request.acquireTimeoutMs ?? 0;
  const requestId = request.requestId;
  const existing = requestId === undefined ? undefined : ns.requests.get(requestId);
  if (existing !== undefined) return retriedWait(table, existing, specs, now + timeoutMs);
  if (allGrantableNow(ns, specs)) return WAIT_FREE;
  if (timeoutMs === 0) {
    limits.tally.timeouts++;
    return WAIT_TIMEOUT;
  }
  if (ns.waiting.size >= limits.maxWaitingPerNamespace) throw tooManyWaiting(ns.name, ns.waiting.size, limits.maxWaitingPerNamespace);
  const req = new LockRequestState(ns, specs, requestId, true, specs.length);
  req.waitOnly = true;
  req.arrivedAt = Math.floor(now);
  table.advanceAllOrNone(req);
  // It could not pass everything now (checked above), so it is queued and has its waiting state.
  const pending = req.waiter();
  pending.deadline = Math.ceil(now + timeoutMs);
  pending.waitSerial = limits.nextSerial();
  table.deadlines.push(pending);
  ns.waiting.add(req);
  if (requestId !== undefined) ns.requests.set(requestId, req);
  if (table.sink !== null) table.sink(ns.name, waiterEntry(req, now));
  return pending;
}

/**
 * Hold a fresh timestamp under `request.name` and take `request.count` more (see
 * `LockEngine.acquireTimestampLease`); a live `requestId` of the same lease answers it again.
 */
export function holdTimestampLease(table: LockTable, ns: NamespaceState, request: TimestampLeaseRequest, now: number, leaseMs: number, lease: Lease): TimestampLeaseResponse {
  const requestId = request.requestId;
  const existing = requestId === undefined ? undefined : ns.requests.get(requestId);
  if (existing !== undefined) return retriedLease(table, existing, request, now + leaseMs, lease);
  const leased = ns.take(1 + request.count);
  return leaseAnswer(holdLease(table, ns, request.name, leased, request.count, requestId, now), lease);
}

function conflict(requestId: string | undefined, what: string): LeaseholdError {
  return new LeaseholdError("REQUEST_ID_CONFLICT", `requestId ${JSON.stringify(requestId)} is in use by ${what}`, { path: "requestId" });
}

/**
 * A `wait-for-locks` re-sent with the `requestId` of a live request: the same wait joins it (its
 * deadline moves to the later of the two); anything else holding the id is `REQUEST_ID_CONFLICT`.
 */
function retriedWait(table: LockTable, req: LockRequestState, specs: readonly LockSpec[], deadline: number): PendingLock {
  if (!req.waitOnly || req.status !== WAITING || req.pending === null || !sameIdentity(req, specs, true, specs.length)) {
    throw conflict(req.requestId, "a request that is not this wait (other locks or modes, or a lock request or timestamp lease)");
  }
  const pending = req.pending;
  if (Math.ceil(deadline) > pending.deadline) {
    pending.deadline = Math.ceil(deadline);
    table.deadlines.update(pending);
    if (table.sink !== null) table.sink(req.namespace.name, waiterEntry(req, table.now));
  }
  return pending;
}

/**
 * A `timestamp-leases` re-sent with the `requestId` of a live request: the same lease (name and
 * count) is answered again, its lease renewed, so a retry never holds a second timestamp;
 * anything else holding the id is `REQUEST_ID_CONFLICT`.
 */
function retriedLease(table: LockTable, req: LockRequestState, request: TimestampLeaseRequest, expiresAt: number, lease: Lease): TimestampLeaseResponse {
  if (req.leaseName !== request.name || req.max !== request.count || req.status !== HELD) {
    throw conflict(req.requestId, "a request that is not this timestamp lease (another name or count, or a lock request or wait)");
  }
  table.leases.renew(req, expiresAt);
  return leaseAnswer(req, lease);
}

/** The answer of a held timestamp lease: its token, lease, timestamp, the name's minimum and its range. */
function leaseAnswer(req: LockRequestState, lease: Lease): TimestampLeaseResponse {
  const minLeased = req.namespace.minLeased(req.leaseName as string) ?? req.leased;
  return { token: req.token, lease, leased: req.leased, minLeased, timestamps: { start: req.leased + 1, count: req.max } };
}
