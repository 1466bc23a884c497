import type {
  HealthResponse,
  ImmutableTimestampRequest,
  ImmutableTimestampResponse,
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
} from "./types.js";

/** Options every call takes. */
export interface CallOptions {
  /**
   * Aborts the call. For `lock` this abandons the request: it leaves every queue and whatever it had
   * acquired is released, exactly as when an HTTP client disconnects. Default: none.
   */
  readonly signal?: AbortSignal;
}

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
  /** Liveness and the current `leaderId`. */
  health(options?: CallOptions): Promise<HealthResponse>;
}
