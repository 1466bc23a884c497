import {
  isErrorCode,
  LeaseholdError,
  operationPath,
  type CallOptions,
  type HealthResponse,
  type ImmutableTimestampRequest,
  type ImmutableTimestampResponse,
  type LockRequest,
  type LockResponse,
  type LockService,
  type AnyOperation,
  type LockCancelRequest,
  type LockCancelResponse,
  type TimestampLeaseMinRequest,
  type TimestampLeaseMinResponse,
  type TimestampLeaseRequest,
  type TimestampLeaseResponse,
  type WaitForLocksRequest,
  type WaitForLocksResponse,
  type RefreshRequest,
  type RefreshResponse,
  type StartTransactionsRequest,
  type StartTransactionsResponse,
  type TimestampsRequest,
  type TimestampsResponse,
  type UnlockRequest,
  type UnlockResponse,
} from "@leasehold/protocol";

/**
 * A test-only {@link LockService} over plain `fetch`, so the contract suite can run against the
 * HTTP server exactly as against the embedded service. Error bodies become `LeaseholdError`s with
 * the wire code; an aborted call rejects with `CANCELLED`. (The real client lives in
 * `@leasehold/client`, which the server package must not import.)
 */
export class HttpLockService implements LockService {
  constructor(private readonly baseUrl: string) {}

  private async call<T>(method: "GET" | "POST", path: string, body: unknown, options: CallOptions = {}): Promise<T> {
    let res: Response;
    try {
      res = await fetch(this.baseUrl + path, {
        method,
        headers: body === undefined ? {} : { "content-type": "application/json" },
        body: body === undefined ? null : JSON.stringify(body),
        signal: options.signal ?? null,
      });
    } catch (err) {
      if (options.signal?.aborted) throw new LeaseholdError("CANCELLED", "the call was aborted", {}, { cause: err });
      throw err;
    }
    const text = await res.text();
    const parsed = text === "" ? undefined : (JSON.parse(text) as unknown);
    if (res.ok) return parsed as T;
    const error = (parsed as { error?: { code?: unknown; message?: unknown; details?: unknown } } | undefined)?.error;
    const code = isErrorCode(error?.code) ? error.code : "BAD_RESPONSE";
    const details = (error?.details ?? {}) as Record<string, unknown>;
    throw new LeaseholdError(code, typeof error?.message === "string" ? error.message : `HTTP ${res.status}`, { ...details, httpStatus: res.status });
  }

  private post<T>(namespace: string, operation: AnyOperation, body: unknown, options?: CallOptions): Promise<T> {
    return this.call<T>("POST", operationPath(namespace, operation), body, options);
  }

  lock(namespace: string, request: LockRequest, options?: CallOptions): Promise<LockResponse> {
    return this.post(namespace, "lock", request, options);
  }
  unlock(namespace: string, request: UnlockRequest, options?: CallOptions): Promise<UnlockResponse> {
    return this.post(namespace, "unlock", request, options);
  }
  refresh(namespace: string, request: RefreshRequest, options?: CallOptions): Promise<RefreshResponse> {
    return this.post(namespace, "refresh", request, options);
  }
  timestamps(namespace: string, request: TimestampsRequest, options?: CallOptions): Promise<TimestampsResponse> {
    return this.post(namespace, "timestamps", request, options);
  }
  startTransactions(namespace: string, request: StartTransactionsRequest, options?: CallOptions): Promise<StartTransactionsResponse> {
    return this.post(namespace, "transactions/start", request, options);
  }
  immutableTimestamp(namespace: string, request: ImmutableTimestampRequest, options?: CallOptions): Promise<ImmutableTimestampResponse> {
    return this.post(namespace, "immutable-timestamp", request, options);
  }
  waitForLocks(namespace: string, request: WaitForLocksRequest, options?: CallOptions): Promise<WaitForLocksResponse> {
    return this.post(namespace, "wait-for-locks", request, options);
  }
  cancelLock(namespace: string, request: LockCancelRequest, options?: CallOptions): Promise<LockCancelResponse> {
    return this.post(namespace, "lock-cancel", request, options);
  }
  acquireTimestampLease(namespace: string, request: TimestampLeaseRequest, options?: CallOptions): Promise<TimestampLeaseResponse> {
    return this.post(namespace, "timestamp-leases", request, options);
  }
  minLeasedTimestamp(namespace: string, request: TimestampLeaseMinRequest, options?: CallOptions): Promise<TimestampLeaseMinResponse> {
    return this.post(namespace, "timestamp-leases/min", request, options);
  }
  health(options?: CallOptions): Promise<HealthResponse> {
    return this.call("GET", "/v1/health", undefined, options);
  }
}
