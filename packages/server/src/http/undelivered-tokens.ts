import type { AnyOperation, LockResponse, StartTransactionsResponse, TimestampLeaseResponse } from "@leasehold/protocol";

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null;
}

/**
 * The tokens an answer hands out that nobody could ever release if the answer is not delivered:
 * a granted `lock` or `timestamp-leases` without a `requestId`, and every transaction of
 * `transactions/start`.
 *
 * (A `lock-batch` entry is judged as the `lock` it is, line by line, by the batch's own handler.)
 *
 * A `lock` with a `requestId` is left out on purpose: a retry with the same id (perhaps already
 * in flight on another connection) is answered the same token, so releasing it here could pull a
 * lock from under a client that did receive it. Such a token lapses with its lease instead.
 */
export function undeliveredTokens(operation: AnyOperation, request: unknown, answer: unknown): string[] {
  if (operation === "lock") {
    if (isRecord(request) && request.requestId !== undefined) return [];
    const lock = answer as LockResponse;
    return lock.status === "acquired" ? [lock.token] : [];
  }
  if (operation === "timestamp-leases") {
    if (isRecord(request) && request.requestId !== undefined) return [];
    return [(answer as TimestampLeaseResponse).token];
  }
  if (operation === "transactions/start") {
    return (answer as StartTransactionsResponse).transactions.map((t) => t.token);
  }
  return [];
}
