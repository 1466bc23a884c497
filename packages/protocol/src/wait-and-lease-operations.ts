/**
 * Operations added to v1 for TimeLock's `waitForLocks` and named minimum-timestamp leases
 * (docs/protocol.md "wait-for-locks", "timestamp-leases"). A server without them answers
 * `404 NOT_FOUND` on their routes.
 */
export const WAIT_AND_LEASE_OPERATIONS = ["wait-for-locks", "timestamp-leases", "timestamp-leases/min"] as const;

/** One of {@link WAIT_AND_LEASE_OPERATIONS}. */
export type WaitAndLeaseOperation = (typeof WAIT_AND_LEASE_OPERATIONS)[number];

/** True when `value` names one of {@link WAIT_AND_LEASE_OPERATIONS}. */
export function isWaitAndLeaseOperation(value: string): value is WaitAndLeaseOperation {
  return (WAIT_AND_LEASE_OPERATIONS as readonly string[]).includes(value);
}
