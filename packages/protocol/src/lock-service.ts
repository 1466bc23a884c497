import type {
  HealthResponse,
  ImmutableTimestampRequest,
  ImmutableTimestampResponse,
  LockBatchLine,
  LockBatchRequest,
  LockCancelRequest,
  LockCancelResponse,
  LockRequest,
  LockResponse,
  RefreshRequest,
  RefreshResponse,
  StartTransactionsRequest,
  StartTransactionsResponse,
  TimestampsRequest,
  TimestampsResponse,
  UnlockRequest,
  UnlockResponse,
  TimestampLeaseMinRequest,
  TimestampLeaseMinResponse,
  TimestampLeaseRequest,
  TimestampLeaseResponse,
  WaitForLocksRequest,
  WaitForLocksResponse,
} from "./types.js";
import type { LockEventsRequest, LockWatchesRequest, LockWatchesResponse, LockWatchUpdate } from "./lock-watch-types.js";

/** Options every call takes. */
export interface CallOptions {
  /**
   * Aborts the call. For `lock` this abandons the request: it leaves every queue and whatever it had
   * acquired is released, exactly as when an HTTP client disconnects. Default: none.
   */
  readonly signal?: AbortSignal | undefined;
}

/**
 * Receives one line of a lock batch as its entry resolves: `{ index, result }` or
 * `{ index, error }`. Called exactly once per entry, in the order entries resolve (not index order).
 */
export type LockBatchResultListener = (line: LockBatchLine) => void;

/**
 * The leasehold protocol as an interface: one method per operation, each taking the namespace,
 * the request body and `{ signal? }`, and resolving to the answer body. Errors are
 * `LeaseholdError`s with the protocol's codes; a lock timeout is an answer, not an error.
 *
 * Implementations say how they reach a lock table: the server's embedded service, or a client's
 * HTTP transport. Anything written against this interface works with both.
 */
export interface LockService {
  /** Acquire locks (see PROTOCOL.md `lock`). */
  lock(namespace: string, request: LockRequest, options?: CallOptions): Promise<LockResponse>;
  /** Release tokens; idempotent. */
  unlock(namespace: string, request: UnlockRequest, options?: CallOptions): Promise<UnlockResponse>;
  /** Renew the leases of tokens still held. */
  refresh(namespace: string, request: RefreshRequest, options?: CallOptions): Promise<RefreshResponse>;
  /** A range of fresh timestamps. */
  timestamps(namespace: string, request: TimestampsRequest, options?: CallOptions): Promise<TimestampsResponse>;
  /** Start transactions: start timestamps, each held by an immutable-timestamp lock. */
  startTransactions(
    namespace: string,
    request: StartTransactionsRequest,
    options?: CallOptions,
  ): Promise<StartTransactionsResponse>;
  /** The namespace's immutable timestamp. */
  immutableTimestamp(
    namespace: string,
    request: ImmutableTimestampRequest,
    options?: CallOptions,
  ): Promise<ImmutableTimestampResponse>;
  /**
   * Optional (an addition to v1; implementations without it keep working): run every entry of a
   * batch as its own `lock`, queued in array order, and report each entry to `onResult` as soon as
   * it resolves. A bad entry is reported on its own line and does not fail the others; a malformed
   * batch as a whole rejects `INVALID_ARGUMENT` before any entry is run. Resolves once every entry
   * has been reported. Aborting `signal` abandons every unresolved entry (each then reports
   * `CANCELLED`).
   */
  lockBatch?(
    namespace: string,
    request: LockBatchRequest,
    onResult: LockBatchResultListener,
    options?: CallOptions,
  ): Promise<void>;
  /**
   * Optional (an addition to v1): give up the lock request with this `requestId` in the namespace,
   * without disturbing any other. A waiting one is abandoned (its callers get `CANCELLED`); a granted
   * one is released. `{ cancelled: false }` when no live request has that id.
   */
  cancelLock?(namespace: string, request: LockCancelRequest, options?: CallOptions): Promise<LockCancelResponse>;
  /**
   * Optional (an addition to v1): wait until each descriptor, in turn, could have been granted in
   * its mode, queueing first-in-first-out as a lock request would, without acquiring anything
   * (TimeLock's `waitForLocks`; see `wait-for-locks` in docs/protocol.md). `{ status: "free" }` or
   * `{ status: "timeout" }`; a `requestId` repeated while the wait runs joins it, and `lock-cancel`
   * with it ends the wait with `timeout`. Aborting `signal` abandons this caller's wait.
   */
  waitForLocks?(namespace: string, request: WaitForLocksRequest, options?: CallOptions): Promise<WaitForLocksResponse>;
  /**
   * Optional (an addition to v1): hold a fresh timestamp under `name` by a token that refreshes,
   * unlocks and lapses like a lock, and take `count` more fresh timestamps (see `timestamp-leases`).
   */
  acquireTimestampLease?(namespace: string, request: TimestampLeaseRequest, options?: CallOptions): Promise<TimestampLeaseResponse>;
  /** Optional (an addition to v1): the smallest timestamp held under `name`, or a fresh one. */
  minLeasedTimestamp?(namespace: string, request: TimestampLeaseMinRequest, options?: CallOptions): Promise<TimestampLeaseMinResponse>;
  /**
   * Optional (an addition to v1, PROTOCOL.md "Lock watches"): watch these descriptor prefixes in the
   * namespace, or keep watching them; a watch lapses unless re-registered within the server's
   * watch TTL. Resolves with every prefix now watched.
   */
  lockWatches?(namespace: string, request: LockWatchesRequest, options?: CallOptions): Promise<LockWatchesResponse>;
  /**
   * Optional (an addition to v1): the lock events on watched descriptors after `since`, or a
   * snapshot of what is locked when `since` is null, of another log, or older than the server
   * keeps. With `waitMs`, an answer without new events waits up to that long for one.
   */
  lockEvents?(namespace: string, request: LockEventsRequest, options?: CallOptions): Promise<LockWatchUpdate>;
  /** Liveness and the current `leaderId`. */
  health(options?: CallOptions): Promise<HealthResponse>;
}
