export { LockClient } from "./lock-client.js";
export type { SignalOptions, StartedTransactionInfo } from "./lock-options.js";
export type { LockClientOptions, HttpLockClientOptions } from "./lock-client-options.js";
export type { Logger } from "./logger.js";
export type { LockOptions } from "./lock-options.js";
export type { WithLockOptions, WithLockResult, WithLockWork } from "./with-lock.js";
export { GrantedLock, LOCK_TIMEOUT } from "./lock-result.js";
export { TimestampLease } from "./timestamp-lease.js";
export type { WaitForLocksOptions } from "./wait-for-locks.js";
export type { LockResult, LockTimeout } from "./lock-result.js";
export type { LostLock, LostLockReason } from "./lost-lock.js";
export type { WatchLocksOptions } from "./watch-locks.js";
export type { WatchedStart } from "./watched-start-batch.js";
export { CLIENT_CHANNELS } from "@leasehold/protocol";
export type {
  ClientLockRequestMessage,
  ClientLockEndMessage,
  ClientLockGrantedMessage,
  ClientLockErrorMessage,
  ClientLockReleaseMessage,
  ClientLockLostMessage,
  ClientUnlockFlushMessage,
  ClientRefreshMessage,
} from "@leasehold/protocol";
export { tokenFingerprint } from "./token-fingerprint.js";
export type { ClientStatsSnapshot, HistogramBucket } from "./client-stats.js";
export { HttpLockService } from "./http-lock-service.js";
export type { HttpLockServiceOptions, RetryOptions } from "./http-lock-service-options.js";
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
  WaitSpec,
  WaitMode,
  WaitForLocksResponse,
  TimestampLeaseResponse,
  LockWatchUpdate,
  LockWatchSince,
  LockEvent,
  WatchedLock,
} from "@leasehold/protocol";
export { readLock, writeLock, documentDescriptor } from "./recipes/document-lock.js";
export type { DocumentLockOptions, DocumentWork } from "./recipes/document-lock.js";
export { HeldLock } from "./recipes/held-lock.js";
export { JobSemaphore } from "./recipes/job-semaphore.js";
export type { JobSemaphoreOptions, JobStartOptions, JobStart } from "./recipes/job-semaphore.js";
export { WorkQueueClaims, TaskClaim } from "./recipes/work-queue-claims.js";
export type { ClaimOptions } from "./recipes/work-queue-claims.js";
export { Mutex } from "./recipes/mutex.js";
export type { MutexOptions } from "./recipes/mutex.js";
export { TimeoutLock } from "./recipes/timeout-lock.js";
export type { TimeoutLockOptions } from "./recipes/timeout-lock.js";
export { StateTransitions } from "./recipes/state-transition.js";
export type { TaskState, TaskStateStore, StateTransitionOptions, CapturedTasks } from "./recipes/state-transition.js";
export { runClaimWorker } from "./recipes/run-claim-worker.js";
export type { ClaimWorkerOptions, ClaimWorkerStats, ContinuousClaimOptions } from "./recipes/run-claim-worker.js";
export { InMemoryRetriesLeft } from "./recipes/retries-left.js";
export type { RetriesLeftStore } from "./recipes/retries-left.js";
export { LockBatcher, MAX_BATCHES_IN_TRANSIT } from "./lock-batcher.js";
export type { LockBatcherOptions } from "./lock-batcher.js";
export type { LockBatchCallOptions } from "./http-lock-service.js";
