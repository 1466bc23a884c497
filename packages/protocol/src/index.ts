export { rowLock, cellLock } from "./descriptors.js";
export type { DescriptorPart } from "./descriptors.js";
export { LeaseholdError, isLeaseholdError, isErrorCode, ERROR_CODES, ERROR_STATUS } from "./errors.js";
export type { ErrorCode, ErrorDetails } from "./errors.js";
export type { LockService, CallOptions, LockBatchResultListener } from "./lock-service.js";
export { LIMITS, NAMESPACE_PATTERN, PROTOCOL_VERSION } from "./limits.js";
export { OPERATIONS, BATCH_OPERATIONS, isOperation, isBatchOperation, operationPath } from "./operations.js";
export type { Operation, BatchOperation, AnyOperation } from "./operations.js";
export {
  requestValidators,
  responseValidators,
  validateNamespace,
  descriptorProblem,
  formatPath,
  invalid,
} from "./validation.js";
export type { Validator, ValidationProblem } from "./validation.js";
export { utf8ByteLength } from "./utf8.js";
export { fnv1a32, shardOf } from "./shards.js";
export { CompactLineWriter, CompactLineReader } from "./compact-lines.js";
export * from "./schemas.js";
export type { OptionalUndefined } from "./optional-undefined.js";
export type {
  LockMode,
  LockBehavior,
  LockSpec,
  Lease,
  LockRequest,
  AcquiredLock,
  LockAcquiredResponse,
  LockTimeoutResponse,
  LockResponse,
  UnlockRequest,
  UnlockResponse,
  RefreshRequest,
  RefreshResponse,
  TimestampsRequest,
  TimestampsResponse,
  StartTransactionsRequest,
  StartedTransaction,
  StartTransactionsResponse,
  ImmutableTimestampRequest,
  ImmutableTimestampResponse,
  HealthResponse,
  ClusterLeader,
  ClusterResponse,
  ErrorBody,
  LockBatchRequest,
  LockBatchLine,
  LockBatchLeaseLine,
  LockBatchGrantLine,
  LockBatchWireLine,
  LockCancelRequest,
  LockCancelResponse,
} from "./types.js";
