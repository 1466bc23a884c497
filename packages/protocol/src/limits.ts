/**
 * Numeric limits of protocol v1. Every one of them is part of the wire contract: a value outside
 * its range is refused with `400 INVALID_ARGUMENT`, so clients can check before they send.
 */
export const LIMITS = {
  /** Most lock specs in one `lock` request. */
  maxLocksPerRequest: 10_000,
  /** Most tokens in one `unlock` or `refresh` request. */
  maxTokensPerRequest: 10_000,
  /** Longest a single `lock` request may wait; longer waits are re-sent with the same `requestId`. */
  maxAcquireTimeoutMs: 60_000,
  /** Largest `limit` of a permit lock. */
  maxPermitLimit: 1_000_000,
  /** Largest `count` of a `timestamps` request. */
  maxTimestampCount: 10_000,
  /** Largest `count` of a `transactions/start` request. */
  maxTransactionCount: 1_000,
  /** Most shards a cluster may have (PROTOCOL.md "Cluster mode"); the default is 64. */
  maxShards: 4_096,
  /** Longest descriptor, in UTF-8 bytes. */
  maxDescriptorBytes: 1024,
  /** Longest `requestId`, in characters. */
  maxRequestIdLength: 128,
  /** Longest name of a timestamp lease (`timestamp-leases`), in characters. */
  maxLeaseNameLength: 128,
  /** Longest `clientDescription`, in characters. */
  maxClientDescriptionLength: 256,
  /** Longest token string accepted in a request (real tokens are far shorter). */
  maxTokenLength: 1024,
  /**
   * Most lock requests in one `lock-batch`. 1,000 keeps a batch's bookkeeping and its NDJSON answer
   * small next to the 1 MiB body limit, while far exceeding what a client coalesces in one flush.
   */
  maxRequestsPerBatch: 1_000,
  /** Most fingerprints or descriptors in one `revoke` request. */
  maxRevokeEntries: 10_000,
  /** Largest `limit` of an inspection page (`GET /v1/namespaces`, `GET …/locks`). */
  maxInspectionPageSize: 1_000,
  /** Most prefixes in one `lock-watches` request. */
  maxWatchPrefixesPerRequest: 100,
  /** Most prefixes watched at once in one namespace; registering more is refused (400). */
  maxWatchPrefixesPerNamespace: 1_000,
  /** Longest `waitMs` of a `lock-events` long poll. */
  maxLockEventsWaitMs: 30_000,
  /** Largest request body, in bytes; a larger one is refused with `413` without reading it all. */
  maxBodyBytes: 1024 * 1024,
} as const;

/** The pattern every namespace must match (`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`). */
export const NAMESPACE_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** The protocol version this package speaks; it is the `/v1/` of every route. */
export const PROTOCOL_VERSION = "v1";
