export { LockClient } from "./lock-client.js";
export type { SignalOptions, StartedTransactionInfo } from "./lock-client.js";
export type { LockClientOptions, HttpLockClientOptions } from "./lock-client-options.js";
export type { LockOptions } from "./lock-options.js";
export type { WithLockOptions, WithLockResult } from "./with-lock.js";
export type { LostLock, LostLockReason } from "./lost-lock.js";
export type { ClientStatsSnapshot, HistogramBucket } from "./client-stats.js";
export { HttpLockService } from "./http-lock-service.js";
export type { HttpLockServiceOptions, RetryOptions } from "./http-lock-service.js";
export { Autobatcher } from "./autobatcher.js";
export type { BatchFunction } from "./autobatcher.js";
export { LeaseholdError, isLeaseholdError, rowLock, cellLock } from "@leasehold/protocol";
export type {
  ErrorCode,
  LockService,
  LockSpec,
  LockMode,
  LockBehavior,
  Lease,
  LockResponse,
  LockAcquiredResponse,
  LockTimeoutResponse,
  AcquiredLock,
  RefreshResponse,
  TimestampsResponse,
  StartTransactionsResponse,
} from "@leasehold/protocol";
