/** Names of the spans this package starts. */
export const SPANS = {
  /** From a `lock` call to its answer (granted, timeout, cancelled or error). */
  wait: "leasehold.lock.wait",
  /** From a grant to its release (`tryUnlock`/`unlock`) or its loss. */
  hold: "leasehold.lock.hold",
} as const;

/** Names of the metric instruments this package records. */
export const METRICS = {
  /** Histogram, seconds: how long lock calls took, by `leasehold.outcome`. */
  waitTime: "leasehold.lock.wait.duration",
  /** Histogram, seconds: how long locks were held, by `leasehold.outcome` (`released` or `lost`). */
  holdTime: "leasehold.lock.hold.duration",
  /** Histogram, tokens: the batch size of each `unlock` call of the asynchronous unlocker. */
  unlockBatchSize: "leasehold.unlock.batch.size",
  /** Histogram, seconds: how long the client's batched refreshes took. */
  refreshTime: "leasehold.refresh.duration",
  /** Counter: held locks the client gave up, by `leasehold.lost.reason`. */
  lostLocks: "leasehold.lock.lost",
  /** Counter (server): grants, by `leasehold.waited`. */
  serverGrants: "leasehold.server.lock.grants",
  /** Counter (server): tokens released because nothing refreshed them in time. */
  serverLapses: "leasehold.server.lease.lapses",
} as const;

/** Attribute keys on spans and metric points. */
export const ATTR = {
  namespace: "leasehold.namespace",
  requestId: "leasehold.request_id",
  lockCount: "leasehold.lock.count",
  acquireTimeoutMs: "leasehold.acquire_timeout_ms",
  tokenFingerprint: "leasehold.token.fingerprint",
  outcome: "leasehold.outcome",
  errorCode: "leasehold.error.code",
  lostReason: "leasehold.lost.reason",
  waited: "leasehold.waited",
} as const;
