/**
 * The operations of protocol v1, as they appear in routes:
 * `POST /v1/namespaces/{namespace}/{operation}`.
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

/** True when `value` names an operation. */
export function isOperation(value: string): value is Operation {
  return (OPERATIONS as readonly string[]).includes(value);
}

/** The route path of an operation in a namespace (the namespace is not validated here). */
export function operationPath(namespace: string, operation: Operation): string {
  return `/v1/namespaces/${encodeURIComponent(namespace)}/${operation}`;
}
