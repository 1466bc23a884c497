import { LeaseholdError, type Lease, type LockSpec, type TimestampLeaseRequest, type TimestampLeaseResponse } from "@leasehold/protocol";
import { HELD, WAITING, type LockRequestState } from "./lock-request-state.js";
import type { LockTable } from "./lock-table.js";
import type { PendingLock } from "./pending-lock.js";
import { sameIdentity } from "./request-identity.js";

function conflict(requestId: string | undefined, what: string): LeaseholdError {
  return new LeaseholdError("REQUEST_ID_CONFLICT", `requestId ${JSON.stringify(requestId)} is in use by ${what}`, { path: "requestId" });
}

/**
 * A `wait-for-locks` re-sent with the `requestId` of a live request: the same wait joins it (its
 * deadline moves to the later of the two); anything else holding the id is `REQUEST_ID_CONFLICT`.
 */
export function retriedWait(table: LockTable, req: LockRequestState, specs: readonly LockSpec[], deadline: number): PendingLock {
  if (!req.waitOnly || req.status !== WAITING || req.pending === null || !sameIdentity(req, specs, true, specs.length)) {
    throw conflict(req.requestId, "a request that is not this wait (other locks or modes, or a lock request or timestamp lease)");
  }
  if (deadline > req.deadline) {
    req.deadline = deadline;
    table.deadlines.update(req);
  }
  return req.pending;
}

/**
 * A `timestamp-leases` re-sent with the `requestId` of a live request: the same lease (name and
 * count) is answered again, its lease renewed, so a retry never holds a second timestamp;
 * anything else holding the id is `REQUEST_ID_CONFLICT`.
 */
export function retriedLease(table: LockTable, req: LockRequestState, request: TimestampLeaseRequest, expiresAt: number, lease: Lease): TimestampLeaseResponse {
  if (req.leaseName !== request.name || req.max !== request.count || req.status !== HELD) {
    throw conflict(req.requestId, "a request that is not this timestamp lease (another name or count, or a lock request or wait)");
  }
  table.leases.renew(req, expiresAt);
  return leaseAnswer(req, lease);
}

/** The answer of a held timestamp lease: its token, lease, timestamp, the name's minimum and its range. */
export function leaseAnswer(req: LockRequestState, lease: Lease): TimestampLeaseResponse {
  const minLeased = req.namespace.minLeased(req.leaseName as string) ?? req.leased;
  return { token: req.token, lease, leased: req.leased, minLeased, timestamps: { start: req.leased + 1, count: req.max } };
}
