/**
 * `@leasehold/server`: the reference lock server. Start it over HTTP with {@link startServer}, or
 * embed the lock service without HTTP with {@link createLockService}.
 */
export { startServer } from "./start-server.js";
export type { StartServerOptions, RunningServer } from "./start-server.js";
export { createLockService } from "./service/create-lock-service.js";
export type {
  EmbeddedLockService,
  LockServiceOptions,
  ServiceMetrics,
  LockTableSnapshot,
  DescriptorSnapshot,
  WaitingLock,
  RevokeContext,
} from "./service/embedded-lock-service.js";
export type { LockBatchRun } from "./service/run-lock-batch.js";
export { createRequestHandler } from "./http/create-request-handler.js";
export type { RequestHandler, RequestHandlerOptions } from "./http/create-request-handler.js";
export { createServerMetrics, REQUEST_DURATION_BUCKETS } from "./metrics/server-metrics.js";
export type { ServerMetrics, ServerMetricsOptions, RouteLabel } from "./metrics/server-metrics.js";
export { tokenFingerprint } from "./engine/token-fingerprint.js";
export { LockEngine } from "./engine/lock-engine.js";
export { parseAuthTable, ANY_NAMESPACE, ADMIN_SCOPE } from "./http/auth-table.js";
export type { AuthTable } from "./http/auth-table.js";
export { loadAuthTable, AUTH_TOKENS_ENV } from "./http/load-auth-table.js";
export type { LoadAuthTableOptions } from "./http/load-auth-table.js";
export { SERVER_CHANNELS } from "@leasehold/protocol";
export type { ServerLockGrantMessage, ServerLeaseLapseMessage } from "@leasehold/protocol";
export type { ClusterOptions } from "./cluster/create-cluster-service.js";
export type {
  Coordinator,
  ShardLease,
  LeaseClaim,
  AcquiredTerm,
  HeldTerm,
  StoredBound,
  ImmutableRecord,
  MemberInfo,
} from "./cluster/coordinator.js";
export { ShardCountMismatchError } from "./cluster/coordinator.js";
export type { ServingGate } from "./engine/serving-gate.js";
export type { TimestampReserver } from "./engine/timestamp-reserver.js";
export { REPLICATION_FORMAT } from "./engine/replication-entries.js";
export type {
  ReplicationEntry,
  ReplicationSink,
  GrantEntry,
  ReleaseEntry,
  ReleaseReason,
  WaiterEntry,
  WaiterEndedEntry,
  WaiterEndReason,
  LimitEntry,
  CounterEntry,
  NamespaceImage,
  TokenImage,
  TokenImageAt,
  LockTokenImage,
  ImmutableLockImage,
  TimestampLeaseImage,
  WaiterImage,
  ReplicatedHold,
  ReplicatedQueuePlace,
  PromoteOptions,
  PromoteSummary,
} from "./engine/replication-entries.js";
