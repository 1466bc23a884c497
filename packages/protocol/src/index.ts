export { rowLock, cellLock } from "./descriptors.js";
export type { DescriptorPart } from "./descriptors.js";
export { LeaseholdError, isLeaseholdError, isErrorCode, ERROR_CODES, ERROR_STATUS } from "./errors.js";
export type { ErrorCode, ErrorDetails } from "./errors.js";
export type { LockService, CallOptions, LockBatchResultListener } from "./lock-service.js";
export { LIMITS, NAMESPACE_PATTERN, PROTOCOL_VERSION } from "./limits.js";
export { OPERATIONS, BATCH_OPERATIONS, isOperation, isBatchOperation, operationPath } from "./operations.js";
export type { Operation, BatchOperation, AnyOperation } from "./operations.js";
export { WAIT_AND_LEASE_OPERATIONS, isWaitAndLeaseOperation } from "./wait-and-lease-operations.js";
export type { WaitAndLeaseOperation } from "./wait-and-lease-operations.js";
export { WATCH_OPERATIONS, isWatchOperation } from "./operations.js";
export type { WatchOperation } from "./operations.js";
export * from "./lock-watch-schemas.js";
export type {
  LockWatchesRequest,
  LockWatchesResponse,
  LockWatchSince,
  LockEventsRequest,
  WatchedLock,
  LockEvent,
  LockEventsUpdate,
  LockSnapshotUpdate,
  LockWatchUpdate,
} from "./lock-watch-types.js";
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
export { onAbort } from "./on-abort.js";
export { fnv1a32, shardOf } from "./shards.js";
export { CompactLineWriter, CompactLineReader } from "./compact-lines.js";
export * from "./schemas.js";
export * from "./wait-and-lease-schemas.js";
export * from "./inspection-schemas.js";
export * from "./activity-schemas.js";
export * from "./cluster-members-schemas.js";
export {
  parseNamespaceLocksQuery,
  parseNamespacesQuery,
  DEFAULT_LOCKS_PAGE_SIZE,
  DEFAULT_NAMESPACES_PAGE_SIZE,
  namespacesPath,
  namespaceLocksPath,
  revokePath,
} from "./inspection-query.js";
export type { QueryEntries } from "./inspection-query.js";
export type {
  InspectionView,
  NamespaceSummary,
  NamespacesResponse,
  NamespacesQuery,
  LockHolder,
  LockWaiter,
  DescriptorInspection,
  WatcherInspection,
  ImmutableLockInspection,
  DescriptorsPage,
  WatchersPage,
  ImmutableLocksPage,
  NamespaceLocksResponse,
  NamespaceLocksQuery,
  RevokeRequest,
  RevokedHolder,
  RevokeResponse,
} from "./inspection-types.js";
export type { ActivityHolder, LapseEvent, RevokeEvent, ActivityEvent, ActivitySecond, EventsResponse } from "./activity-types.js";
export { protocolJsonSchemas, PROTOCOL_BODIES, JSON_SCHEMA_DIALECT } from "./documents/json-schemas.js";
export type { ProtocolBody } from "./documents/json-schemas.js";
export { openApiDocument } from "./documents/openapi-document.js";
export type { OpenApiDocumentOptions } from "./documents/openapi-document.js";
export { CLIENT_CHANNELS, SERVER_CHANNELS } from "./diagnostics-channels.js";
export type {
  ClientLockRequestMessage,
  ClientLockEndMessage,
  ClientLockGrantedMessage,
  ClientLockErrorMessage,
  ClientLockReleaseMessage,
  ClientLockLostMessage,
  ClientUnlockFlushMessage,
  ClientRefreshMessage,
  ServerLockGrantMessage,
  ServerLeaseLapseMessage,
} from "./diagnostics-channels.js";
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
  HealthCluster,
  ClusterLeader,
  ClusterLeaderStandby,
  ClusterResponse,
  ErrorBody,
  LockBatchRequest,
  LockBatchLine,
  LockBatchLeaseLine,
  LockBatchGrantLine,
  LockBatchWireLine,
  LockCancelRequest,
  LockCancelResponse,
  WaitMode,
  WaitSpec,
  WaitForLocksRequest,
  WaitForLocksResponse,
  TimestampLeaseRequest,
  TimestampLeaseResponse,
  TimestampLeaseMinRequest,
  TimestampLeaseMinResponse,
} from "./types.js";
