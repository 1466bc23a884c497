import {
  LeaseholdError,
  operationPath,
  responseValidators,
  type CallOptions,
  type HealthResponse,
  type ImmutableTimestampRequest,
  type ImmutableTimestampResponse,
  type LockBatchRequest,
  type LockBatchResultListener,
  type LockCancelRequest,
  type LockCancelResponse,
  type LockEventsRequest,
  type LockWatchesRequest,
  type LockWatchesResponse,
  type LockWatchUpdate,
  type LockRequest,
  type LockResponse,
  type LockService,
  type AnyOperation,
  type RefreshRequest,
  type RefreshResponse,
  type StartTransactionsRequest,
  type StartTransactionsResponse,
  type TimestampsRequest,
  type TimestampsResponse,
  type UnlockRequest,
  type UnlockResponse,
  type Validator,
  type TimestampLeaseMinRequest,
  type TimestampLeaseMinResponse,
  type TimestampLeaseRequest,
  type TimestampLeaseResponse,
  type WaitForLocksRequest,
  type WaitForLocksResponse,
} from "@leasehold/protocol";
import type { Dispatcher } from "undici";
import type { HttpLockServiceOptions } from "./http-lock-service-options.js";
import { jitteredRetry } from "./jittered-retry.js";
import { ClusterTransport } from "./cluster-transport.js";
import { dispatchExchange, textExchange } from "./dispatch-exchange.js";
import { LeaderTerms } from "./leader-terms.js";
import { loadUndici } from "./require-dependency.js";
import { LockBatchLineReader } from "./read-lock-batch-lines.js";
import { serverTargets, type ServerTarget } from "./server-target.js";
import { CONNECTION_ERRORS, checkedAnswer, errorCode, errorFromAnswer, transportError } from "./transport-error.js";

/** Options of {@link HttpLockService.lockBatch}: a call's, plus when the server has started the batch. */
export interface LockBatchCallOptions extends CallOptions {
  /**
   * Called once, when the answer's head arrives: the server has read the batch and started every
   * entry (it sends the head after starting them). The lock batcher uses it to let the next batch
   * go without waiting for this one's slowest entry. Default: none.
   */
  readonly onStarted?: (() => void) | undefined;
}

/**
 * The leasehold protocol over HTTP/1.1 with undici: keep-alive connections, JSON bodies, answers
 * checked against the protocol's schemas (`BAD_RESPONSE` otherwise), error bodies turned back into
 * `LeaseholdError`s, and network failures into `UNAVAILABLE` / `CANCELLED`.
 */
export class HttpLockService implements LockService {
  readonly #seeds: readonly ServerTarget[];
  /** `origin` and path prefix, split once: building a URL per call showed in the profile. */
  readonly #origin: string;
  readonly #prefix: string;
  readonly #headers: Record<string, string>;
  readonly #timeoutMs: number;
  readonly #owned: Dispatcher | undefined;
  readonly #retrying: Dispatcher;
  readonly #onlyWhenUnsent: Dispatcher;
  readonly #plain: Dispatcher;
  /** For each retrying dispatcher, the error codes after which a first, direct attempt goes to it. */
  readonly #fallback = new Map<Dispatcher, readonly string[]>();
  /** Leader terms seen (cluster mode), so the client can drop the tokens of one that ended. */
  readonly #terms = new LeaderTerms();
  readonly #backoff: { readonly baseMs: number; readonly capMs: number } | undefined;
  /**
   * Cluster routing: from the start with several `baseUrls`, else from the first `421` (until
   * then a single server costs nothing more than before: no map, no extra request).
   */
  #cluster: ClusterTransport | undefined;

  constructor(options: HttpLockServiceOptions) {
    this.#seeds = serverTargets(options);
    this.#origin = this.#seeds[0]!.origin;
    this.#prefix = this.#seeds[0]!.prefix;
    this.#headers = { "content-type": "application/json", ...options.headers };
    this.#timeoutMs = options.requestTimeoutMs ?? 10_000;
    // undici is loaded here rather than imported: see loadUndici (bundlers).
    const { Agent, RetryAgent } = loadUndici();
    this.#owned = options.dispatcher === undefined ? new Agent({ keepAliveTimeout: 30_000, connections: 128 }) : undefined;
    const base = options.dispatcher ?? this.#owned!;
    this.#plain = base;
    const maxRetries = options.retry === false ? 0 : (options.retry?.maxRetries ?? 6);
    const retry = options.retry === false ? undefined : options.retry;
    const minTimeout = retry?.minTimeoutMs ?? 100;
    const maxTimeout = retry?.maxTimeoutMs ?? 2_000;
    if (options.retry === false || maxRetries < 1) {
      this.#retrying = base;
      this.#onlyWhenUnsent = base;
      this.#backoff = undefined;
    } else {
      this.#backoff = { baseMs: minTimeout, capMs: maxTimeout };
      const backoff = {
        // The first retry is the RetryAgent's own first attempt (see #exchangeWithRetry).
        maxRetries: maxRetries - 1,
        minTimeout,
        maxTimeout,
        timeoutFactor: 2,
        retry: jitteredRetry(options.retry?.random),
        methods: ["POST", "GET"] as Dispatcher.HttpMethod[],
        statusCodes: [503],
        // Let the last answer through, so its error body (not a generic retry error) reaches us.
        throwOnError: false,
      };
      this.#retrying = new RetryAgent(base, { ...backoff, errorCodes: [...CONNECTION_ERRORS] });
      this.#onlyWhenUnsent = new RetryAgent(base, { ...backoff, errorCodes: ["ECONNREFUSED"] });
      this.#fallback.set(this.#retrying, CONNECTION_ERRORS);
      this.#fallback.set(this.#onlyWhenUnsent, ["ECONNREFUSED"]);
    }
    if (this.#seeds.length > 1) this.#cluster = this.#clusterMode();
  }

  /**
   * Call `listener` with each `leaderId` this transport learns has ended (a shard map entry with a
   * higher epoch names another one). Returns the unsubscribe function. `LockClient` refreshes such
   * tokens at once; the refresh answer says whether they are lost.
   */
  onVoidLeader(listener: (leaderId: string) => void): () => void {
    return this.#terms.onVoid(listener);
  }

  /** True once `leaderId`'s term is known to have ended (its tokens are void). */
  isVoidLeader(leaderId: string): boolean {
    return this.#terms.isVoid(leaderId);
  }

  /** The cluster routing, created on first need. */
  #clusterMode(): ClusterTransport {
    return (this.#cluster ??= new ClusterTransport({
      seeds: this.#seeds,
      dispatcher: this.#plain,
      headers: this.#headers,
      getHeaders: withoutContentType(this.#headers),
      timeoutMs: this.#timeoutMs,
      backoff: this.#backoff,
      terms: this.#terms,
    }));
  }

  lock(namespace: string, body: LockRequest, options?: CallOptions): Promise<LockResponse> {
    const dispatcher = body.requestId === undefined ? this.#plain : this.#retrying;
    const timeout = (body.acquireTimeoutMs ?? 0) + this.#timeoutMs;
    return this.#call(namespace, "lock", body, responseValidators.lock, options, dispatcher, timeout);
  }

  unlock(namespace: string, body: UnlockRequest, options?: CallOptions): Promise<UnlockResponse> {
    return this.#call(namespace, "unlock", body, responseValidators.unlock, options);
  }

  refresh(namespace: string, body: RefreshRequest, options?: CallOptions): Promise<RefreshResponse> {
    return this.#call(namespace, "refresh", body, responseValidators.refresh, options);
  }

  timestamps(namespace: string, body: TimestampsRequest, options?: CallOptions): Promise<TimestampsResponse> {
    return this.#call(namespace, "timestamps", body, responseValidators.timestamps, options);
  }

  startTransactions(namespace: string, body: StartTransactionsRequest, options?: CallOptions): Promise<StartTransactionsResponse> {
    return this.#call(namespace, "transactions/start", body, responseValidators["transactions/start"], options, this.#onlyWhenUnsent);
  }

  immutableTimestamp(namespace: string, body: ImmutableTimestampRequest, options?: CallOptions): Promise<ImmutableTimestampResponse> {
    return this.#call(namespace, "immutable-timestamp", body, responseValidators["immutable-timestamp"], options);
  }

  /**
   * `lock-batch`: every entry answered to `onResult` as its NDJSON line arrives (lines are parsed
   * from the body as its chunks come, each checked against the protocol; `BAD_RESPONSE` on
   * anything else). The batch is sent with `compact: true` and compact grant lines are completed
   * from `body.requests`, so `onResult` always receives full lines. Never retried here: a batch is
   * long-lived and half of it may have been answered, so the caller (the lock batcher) decides per
   * unresolved entry. A `404` rejects `NOT_FOUND` with `details.status` 404: the server has no lock
   * batches, and nothing ran.
   */
  async lockBatch(namespace: string, body: LockBatchRequest, onResult: LockBatchResultListener, options?: LockBatchCallOptions): Promise<void> {
    if (this.#cluster !== undefined) return this.#cluster.lockBatch(namespace, body, onResult, options ?? {});
    const signal = options?.signal;
    const operation = "lock-batch";
    // The body may idle between lines for as long as the longest entry waits.
    const longest = body.requests.reduce((m, r) => Math.max(m, r.acquireTimeoutMs ?? 0), 0);
    const request: Dispatcher.DispatchOptions = {
      origin: this.#origin,
      path: this.#prefix + operationPath(namespace, operation),
      method: "POST",
      headers: this.#headers,
      // Compact answers: a grant line is its token and fencing tokens, not the whole `lock`
      // answer; parsing full lines was the client's largest cost under load (ADR 0005).
      body: JSON.stringify({ requests: body.requests, compact: true }),
      headersTimeout: this.#timeoutMs,
      bodyTimeout: longest + this.#timeoutMs,
    };
    const lines = new LockBatchLineReader(body.requests, onResult);
    const errorBody: Buffer[] = [];
    let status = 0;
    try {
      await dispatchExchange(this.#plain, request, signal, {
        start: (statusCode) => {
          status = statusCode;
          options?.onStarted?.();
        },
        data: (chunk) => (status === 200 ? lines.push(chunk) : void errorBody.push(chunk)),
        end: () => (status === 200 ? lines.end() : undefined),
      });
    } catch (err) {
      throw transportError(err, operation, signal);
    }
    if (status === 200) return;
    if (status === 421) {
      // The server is a cluster member that does not lead this namespace: nothing ran.
      return this.#clusterMode().lockBatch(namespace, body, onResult, options ?? {}, { status, text: Buffer.concat(errorBody).toString("utf8") });
    }
    if (status === 404) throw new LeaseholdError("NOT_FOUND", "lock-batch: the server does not have lock batches (404)", { status: 404 });
    throw errorFromAnswer(status, Buffer.concat(errorBody).toString("utf8"), operation);
  }

  /**
   * `wait-for-locks`: waits up to its `acquireTimeoutMs` (plus `requestTimeoutMs` for the answer).
   * Re-sent after a connection failure only with a `requestId` (the re-sent wait joins the first),
   * as `lock` is; aborting `signal` closes the request, and the server then leaves the queue.
   */
  waitForLocks(namespace: string, body: WaitForLocksRequest, options?: CallOptions): Promise<WaitForLocksResponse> {
    const dispatcher = body.requestId === undefined ? this.#plain : this.#retrying;
    const timeout = (body.acquireTimeoutMs ?? 0) + this.#timeoutMs;
    return this.#call(namespace, "wait-for-locks", body, responseValidators["wait-for-locks"], options, dispatcher, timeout);
  }

  /**
   * `timestamp-leases`. Without a `requestId` it is re-sent only when nothing was sent (a re-send
   * could hold a second timestamp, as `transactions/start` could start more transactions); with
   * one, like every idempotent call.
   */
  acquireTimestampLease(namespace: string, body: TimestampLeaseRequest, options?: CallOptions): Promise<TimestampLeaseResponse> {
    const dispatcher = body.requestId === undefined ? this.#onlyWhenUnsent : this.#retrying;
    return this.#call(namespace, "timestamp-leases", body, responseValidators["timestamp-leases"], options, dispatcher);
  }

  /** `timestamp-leases/min`: retried like every idempotent call. */
  minLeasedTimestamp(namespace: string, body: TimestampLeaseMinRequest, options?: CallOptions): Promise<TimestampLeaseMinResponse> {
    return this.#call(namespace, "timestamp-leases/min", body, responseValidators["timestamp-leases/min"], options);
  }

  /** `lock-watches`: watch (or keep watching) descriptor prefixes in the namespace. Idempotent, so retried. */
  lockWatches(namespace: string, body: LockWatchesRequest, options?: CallOptions): Promise<LockWatchesResponse> {
    return this.#call(namespace, "lock-watches", body, responseValidators["lock-watches"], options);
  }

  /** `lock-events`: the update after `body.since`; a long poll may take `waitMs`, so the timeout allows for it. */
  lockEvents(namespace: string, body: LockEventsRequest, options?: CallOptions): Promise<LockWatchUpdate> {
    return this.#call(namespace, "lock-events", body, responseValidators["lock-events"], options, this.#retrying, (body.waitMs ?? 0) + this.#timeoutMs);
  }

  /** `lock-cancel`: give up the lock request with this `requestId`; `{ cancelled }`. Retried like every idempotent call. */
  cancelLock(namespace: string, body: LockCancelRequest, options?: CallOptions): Promise<LockCancelResponse> {
    return this.#call(namespace, "lock-cancel", body, responseValidators["lock-cancel"], options);
  }

  health(options?: CallOptions): Promise<HealthResponse> {
    if (this.#cluster !== undefined) return this.#cluster.call(undefined, "health", "/v1/health", undefined, responseValidators.health, options);
    return this.#send(undefined, "GET", "/v1/health", "health", undefined, responseValidators.health, options, this.#retrying, this.#timeoutMs);
  }

  /** Close the connections this transport opened (a dispatcher passed in stays open). */
  async close(): Promise<void> {
    await this.#owned?.close();
  }

  #call<T>(
    namespace: string,
    operation: AnyOperation,
    body: unknown,
    validator: Validator<T>,
    options: CallOptions | undefined,
    dispatcher: Dispatcher = this.#retrying,
    timeoutMs: number = this.#timeoutMs,
  ): Promise<T> {
    const path = operationPath(namespace, operation);
    if (this.#cluster !== undefined) return this.#cluster.call(namespace, operation, path, body, validator, options);
    return this.#send(namespace, "POST", path, operation, body, validator, options, dispatcher, timeoutMs);
  }

  /**
   * One call to the one server: the exchange (with the dispatcher's retries), then the answer
   * checked; a `421` switches the transport to cluster routing for this call and the next. Chained with
   * `then` rather than awaited through two async frames: each frame is a promise and a microtask
   * hop on every call, and a lock + unlock makes two calls.
   */
  #send<T>(
    namespace: string | undefined,
    method: "GET" | "POST",
    path: string,
    operation: string,
    body: unknown,
    validator: Validator<T>,
    options: CallOptions | undefined,
    dispatcher: Dispatcher,
    timeoutMs: number,
  ): Promise<T> {
    const signal = options?.signal;
    const request: Dispatcher.DispatchOptions = {
      origin: this.#origin,
      path: this.#prefix + path,
      method,
      headers: method === "POST" ? this.#headers : withoutContentType(this.#headers),
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    };
    if (body !== undefined) request.body = JSON.stringify(body);
    return this.#exchangeWithRetry(dispatcher, request, signal).then(
      // A 421 comes from a cluster member that does not lead the namespace: from now on, route.
      ({ status, text }) =>
        status === 421 && namespace !== undefined
          ? this.#clusterMode().call(namespace, operation, path, body, validator, options, { status, text })
          : checkedAnswer(status, text, operation, validator),
      (err: unknown) => {
        throw transportError(err, operation, signal);
      },
    );
  }

  /**
   * Send through `dispatcher`, but make the first attempt directly on the connection pool: undici's
   * RetryAgent wraps every request in a RetryHandler, which cost a third of the client's
   * throughput (measured: 64 callers doing lock+tryUnlock, about 12,000 pairs/s through the
   * RetryAgent against 18,000 without). Only a first attempt that failed in a way the dispatcher
   * retries (its error codes, or a 503) is sent again, through the RetryAgent, which then does
   * the retrying with its backoff; its retry budget is one less, so the total is unchanged.
   */
  #exchangeWithRetry(dispatcher: Dispatcher, request: Dispatcher.DispatchOptions, signal: AbortSignal | undefined): Promise<{ status: number; text: string }> {
    const retryCodes = this.#fallback.get(dispatcher);
    if (retryCodes === undefined) return textExchange(dispatcher, request, signal);
    return textExchange(this.#plain, request, signal).then(
      (first) => (first.status === 503 ? textExchange(dispatcher, request, signal) : first),
      (err: unknown) => {
        const code = errorCode(err);
        if (signal?.aborted || code === undefined || !retryCodes.includes(code)) throw err;
        return textExchange(dispatcher, request, signal);
      },
    );
  }
}

function withoutContentType(headers: Record<string, string>): Record<string, string> {
  const { "content-type": _ignored, ...rest } = headers;
  return rest;
}
