import type { Static, TSchema } from "@sinclair/typebox";
import type { OptionalUndefined } from "./optional-undefined.js";
import type * as S from "./schemas.js";
import type * as W from "./wait-and-lease-schemas.js";

/** The type a schema describes, optional fields accepting `undefined` (see {@link OptionalUndefined}). */
type Wire<T extends TSchema> = OptionalUndefined<Static<T>>;

/** `exclusive`, `shared` or `permit`. */
export type LockMode = Wire<typeof S.LockModeSchema>;
/** `all-or-none` (the default) or `as-many-as-possible`. */
export type LockBehavior = Wire<typeof S.LockBehaviorSchema>;
/** One entry of a lock request's `locks`. */
export type LockSpec = Wire<typeof S.LockSpecSchema>;
/** What the server promises about a token: nothing releases it but unlock for `validForMs`. */
export type Lease = Wire<typeof S.LeaseSchema>;
/** Body of `lock`. */
export type LockRequest = Wire<typeof S.LockRequestSchema>;
/** One granted descriptor with its fencing token. */
export type AcquiredLock = Wire<typeof S.AcquiredLockSchema>;
/** The `acquired` answer of `lock`. */
export type LockAcquiredResponse = Wire<typeof S.LockAcquiredResponseSchema>;
/** The `timeout` answer of `lock`: nothing is held, there is no token. */
export type LockTimeoutResponse = Wire<typeof S.LockTimeoutResponseSchema>;
/** Answer of `lock`. */
export type LockResponse = Wire<typeof S.LockResponseSchema>;
/** Body of `unlock`. */
export type UnlockRequest = Wire<typeof S.UnlockRequestSchema>;
/** Answer of `unlock`: the tokens that were held and are now released. */
export type UnlockResponse = Wire<typeof S.UnlockResponseSchema>;
/** Body of `refresh`. */
export type RefreshRequest = Wire<typeof S.RefreshRequestSchema>;
/** Answer of `refresh`: the tokens still held, all with the one new lease. */
export type RefreshResponse = Wire<typeof S.RefreshResponseSchema>;
/** Body of `timestamps`. */
export type TimestampsRequest = Wire<typeof S.TimestampsRequestSchema>;
/** Answer of `timestamps`: the range `[start, start + count)`. */
export type TimestampsResponse = Wire<typeof S.TimestampsResponseSchema>;
/** Body of `transactions/start`. */
export type StartTransactionsRequest = Wire<typeof S.StartTransactionsRequestSchema>;
/** One started transaction: its start timestamp and the token of its immutable-timestamp lock. */
export type StartedTransaction = Wire<typeof S.StartedTransactionSchema>;
/** Answer of `transactions/start`. */
export type StartTransactionsResponse = Wire<typeof S.StartTransactionsResponseSchema>;
/** Body of `immutable-timestamp` (always `{}`). */
export type ImmutableTimestampRequest = Wire<typeof S.ImmutableTimestampRequestSchema>;
/** Answer of `immutable-timestamp`. */
export type ImmutableTimestampResponse = Wire<typeof S.ImmutableTimestampResponseSchema>;
/** Answer of `GET /v1/health`. */
export type HealthResponse = Wire<typeof S.HealthResponseSchema>;
/** A cluster member's part of the cluster's protection, as its health answer gives it. */
export type HealthCluster = Wire<typeof S.HealthClusterSchema>;
/** A shard's standby in a `GET /v1/cluster` entry. */
export type ClusterLeaderStandby = Wire<typeof S.ClusterLeaderStandbySchema>;
/** One shard's leader in a `GET /v1/cluster` answer. */
export type ClusterLeader = Wire<typeof S.ClusterLeaderSchema>;
/** Answer of `GET /v1/cluster`. */
export type ClusterResponse = Wire<typeof S.ClusterResponseSchema>;
/** Body of every non-2xx answer. */
export type ErrorBody = Wire<typeof S.ErrorBodySchema>;
/** Body of `lock-batch`: 1..1,000 `lock` request bodies. */
export type LockBatchRequest = Wire<typeof S.LockBatchRequestSchema>;
/** One NDJSON line of a `lock-batch` answer: `{ index, result }` or `{ index, error }`. */
export type LockBatchLine = Wire<typeof S.LockBatchLineSchema>;
/** A compact answer's lease line: `{ lease }`, the lease of the grant lines after it. */
export type LockBatchLeaseLine = Wire<typeof S.LockBatchLeaseLineSchema>;
/** A compact answer's grant line: `{ index, token, fencingTokens }`. */
export type LockBatchGrantLine = Wire<typeof S.LockBatchGrantLineSchema>;
/** Any line a `lock-batch` answer may hold: full lines, and with `compact: true` lease and grant lines too. */
export type LockBatchWireLine = LockBatchLine | LockBatchLeaseLine | LockBatchGrantLine;
/** Body of `lock-cancel`. */
export type LockCancelRequest = Wire<typeof S.LockCancelRequestSchema>;
/** Answer of `lock-cancel`. */
export type LockCancelResponse = Wire<typeof S.LockCancelResponseSchema>;
/** A wait's mode: `exclusive` or `shared`. */
export type WaitMode = Wire<typeof W.WaitModeSchema>;
/** One entry of a `wait-for-locks` request's `locks`. */
export type WaitSpec = Wire<typeof W.WaitSpecSchema>;
/** Body of `wait-for-locks`. */
export type WaitForLocksRequest = Wire<typeof W.WaitForLocksRequestSchema>;
/** Answer of `wait-for-locks`: `free` or `timeout`. */
export type WaitForLocksResponse = Wire<typeof W.WaitForLocksResponseSchema>;
/** Body of `timestamp-leases`. */
export type TimestampLeaseRequest = Wire<typeof W.TimestampLeaseRequestSchema>;
/** Answer of `timestamp-leases`. */
export type TimestampLeaseResponse = Wire<typeof W.TimestampLeaseResponseSchema>;
/** Body of `timestamp-leases/min`. */
export type TimestampLeaseMinRequest = Wire<typeof W.TimestampLeaseMinRequestSchema>;
/** Answer of `timestamp-leases/min`. */
export type TimestampLeaseMinResponse = Wire<typeof W.TimestampLeaseMinResponseSchema>;
