import { LeaseholdError } from "@leasehold/protocol";

/**
 * The `429 TOO_MANY_REQUESTS` of a lock request that would wait in a namespace whose waiting
 * requests are at the limit (`maxWaitingPerNamespace`): it names the namespace, the count and the
 * limit, and the two ways on (later, or without waiting).
 */
export function tooManyWaiting(namespace: string, waiting: number, limit: number): LeaseholdError {
  return new LeaseholdError(
    "TOO_MANY_REQUESTS",
    `namespace ${JSON.stringify(namespace)} already has ${waiting} waiting lock requests, the limit (maxWaitingPerNamespace ${limit}); retry later or with acquireTimeoutMs 0`,
    { limit: "maxWaitingPerNamespace", value: limit },
  );
}
