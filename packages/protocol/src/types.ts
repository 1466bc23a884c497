import type { Static } from "@sinclair/typebox";
import type * as S from "./schemas.js";

/** `exclusive`, `shared` or `permit`. */
export type LockMode = Static<typeof S.LockModeSchema>;
/** `all-or-none` (the default) or `as-many-as-possible`. */
export type LockBehavior = Static<typeof S.LockBehaviorSchema>;
/** One entry of a lock request's `locks`. */
export type LockSpec = Static<typeof S.LockSpecSchema>;
/** What the server promises about a token: nothing releases it but unlock for `validForMs`. */
export type Lease = Static<typeof S.LeaseSchema>;
/** Body of `lock`. */
export type LockRequest = Static<typeof S.LockRequestSchema>;
/** One granted descriptor with its fencing token. */
export type AcquiredLock = Static<typeof S.AcquiredLockSchema>;
/** The `acquired` answer of `lock`. */
export type LockAcquiredResponse = Static<typeof S.LockAcquiredResponseSchema>;
/** The `timeout` answer of `lock`: nothing is held, there is no token. */
export type LockTimeoutResponse = Static<typeof S.LockTimeoutResponseSchema>;
/** Answer of `lock`. */
export type LockResponse = Static<typeof S.LockResponseSchema>;
/** Body of `unlock`. */
export type UnlockRequest = Static<typeof S.UnlockRequestSchema>;
/** Answer of `unlock`: the tokens that were held and are now released. */
export type UnlockResponse = Static<typeof S.UnlockResponseSchema>;
/** Body of `refresh`. */
export type RefreshRequest = Static<typeof S.RefreshRequestSchema>;
/** Answer of `refresh`: the tokens still held, all with the one new lease. */
export type RefreshResponse = Static<typeof S.RefreshResponseSchema>;
/** Body of `timestamps`. */
export type TimestampsRequest = Static<typeof S.TimestampsRequestSchema>;
/** Answer of `timestamps`: the range `[start, start + count)`. */
export type TimestampsResponse = Static<typeof S.TimestampsResponseSchema>;
/** Body of `transactions/start`. */
export type StartTransactionsRequest = Static<typeof S.StartTransactionsRequestSchema>;
/** One started transaction: its start timestamp and the token of its immutable-timestamp lock. */
export type StartedTransaction = Static<typeof S.StartedTransactionSchema>;
/** Answer of `transactions/start`. */
export type StartTransactionsResponse = Static<typeof S.StartTransactionsResponseSchema>;
/** Body of `immutable-timestamp` (always `{}`). */
export type ImmutableTimestampRequest = Static<typeof S.ImmutableTimestampRequestSchema>;
/** Answer of `immutable-timestamp`. */
export type ImmutableTimestampResponse = Static<typeof S.ImmutableTimestampResponseSchema>;
/** Answer of `GET /v1/health`. */
export type HealthResponse = Static<typeof S.HealthResponseSchema>;
/** One shard's leader in a `GET /v1/cluster` answer. */
export type ClusterLeader = Static<typeof S.ClusterLeaderSchema>;
/** Answer of `GET /v1/cluster`. */
export type ClusterResponse = Static<typeof S.ClusterResponseSchema>;
/** Body of every non-2xx answer. */
export type ErrorBody = Static<typeof S.ErrorBodySchema>;
/** Body of `lock-batch`: 1..1,000 `lock` request bodies. */
export type LockBatchRequest = Static<typeof S.LockBatchRequestSchema>;
/** One NDJSON line of a `lock-batch` answer: `{ index, result }` or `{ index, error }`. */
export type LockBatchLine = Static<typeof S.LockBatchLineSchema>;
/** A compact answer's lease line: `{ lease }`, the lease of the grant lines after it. */
export type LockBatchLeaseLine = Static<typeof S.LockBatchLeaseLineSchema>;
/** A compact answer's grant line: `{ index, token, fencingTokens }`. */
export type LockBatchGrantLine = Static<typeof S.LockBatchGrantLineSchema>;
/** Any line a `lock-batch` answer may hold: full lines, and with `compact: true` lease and grant lines too. */
export type LockBatchWireLine = LockBatchLine | LockBatchLeaseLine | LockBatchGrantLine;
/** Body of `lock-cancel`. */
export type LockCancelRequest = Static<typeof S.LockCancelRequestSchema>;
/** Answer of `lock-cancel`. */
export type LockCancelResponse = Static<typeof S.LockCancelResponseSchema>;
