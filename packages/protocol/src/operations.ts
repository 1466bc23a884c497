import type { WaitAndLeaseOperation } from "./wait-and-lease-operations.js";

/**
 * The operations of protocol v1 as first published, as they appear in routes:
 * `POST /v1/namespaces/{namespace}/{operation}`. Kept exactly as it was: clients map each of these
 * to a `LockService` method, so growing this list would break code that covers it exhaustively.
 * Later additions are in {@link BATCH_OPERATIONS}.
 */
export const OPERATIONS = [
  "lock",
  "unlock",
  "refresh",
  "timestamps",
  "transactions/start",
  "immutable-timestamp",
] as const;

/** One of {@link OPERATIONS}. */
export type Operation = (typeof OPERATIONS)[number];

/**
 * Operations added to v1 for lock autobatching (docs/protocol.md "Lock batches"). A server
 * without them answers `404 NOT_FOUND` on their routes, which is how a client detects that it must
 * fall back to one `lock` per request.
 */
export const BATCH_OPERATIONS = ["lock-batch", "lock-cancel"] as const;

/** One of {@link BATCH_OPERATIONS}. */
export type BatchOperation = (typeof BATCH_OPERATIONS)[number];

/**
 * Operations added to v1 for lock watches (PROTOCOL.md "Lock watches"): register prefixes, and
 * read (or long-poll) the namespace's lock-event log.
 */
export const WATCH_OPERATIONS = ["lock-watches", "lock-events"] as const;

/** One of {@link WATCH_OPERATIONS}. */
export type WatchOperation = (typeof WATCH_OPERATIONS)[number];

/** Every operation a v1 route can name: {@link Operation}, {@link BatchOperation}, {@link WaitAndLeaseOperation} or {@link WatchOperation}. */
export type AnyOperation = Operation | BatchOperation | WaitAndLeaseOperation | WatchOperation;

/** True when `value` names one of {@link WATCH_OPERATIONS}. */
export function isWatchOperation(value: string): value is WatchOperation {
  return value === "lock-watches" || value === "lock-events";
}

/** True when `value` names one of the original {@link OPERATIONS}. */
export function isOperation(value: string): value is Operation {
  return (OPERATIONS as readonly string[]).includes(value);
}

/** True when `value` names one of {@link BATCH_OPERATIONS}. */
export function isBatchOperation(value: string): value is BatchOperation {
  return value === "lock-batch" || value === "lock-cancel";
}

/** The route path of an operation in a namespace (the namespace is not validated here). */
export function operationPath(namespace: string, operation: AnyOperation): string {
  return `/v1/namespaces/${encodeURIComponent(namespace)}/${operation}`;
}
