import {
  LeaseholdError,
  operationPath,
  responseValidators,
  type CallOptions,
  type ClusterResponse,
  type LockBatchRequest,
  type LockBatchResultListener,
  type LockRequest,
  type Validator,
} from "@leasehold/protocol";
import type { Dispatcher } from "undici";
import { ClusterRouter, type RoutedAnswer } from "./cluster-router.js";
import { dispatchExchange } from "./dispatch-exchange.js";
import type { LeaderTerms } from "./leader-terms.js";
import { LockBatchLineReader } from "./read-lock-batch-lines.js";
import { ShardMap } from "./shard-map.js";
import type { ServerTarget } from "./server-target.js";
import { CONNECTION_ERRORS, checkedAnswer, errorCode, errorFromAnswer, transportError } from "./transport-error.js";
import { retryAfterMs as retryAfterHeader } from "./retry-after-ms.js";

/** Options of {@link ClusterTransport}; the HTTP transport passes its own settings. */
export interface ClusterTransportOptions {
  /** The servers the client was given, in order. */
  readonly seeds: readonly ServerTarget[];
  /** The connection pool every attempt goes through (no retrying wrapper: the router retries). */
  readonly dispatcher: Dispatcher;
  /** Headers of a POST (with `content-type`). */
  readonly headers: Readonly<Record<string, string>>;
  /** Headers of a GET. */
  readonly getHeaders: Readonly<Record<string, string>>;
  /** The transport's `requestTimeoutMs`. */
  readonly timeoutMs: number;
  /** Full-jitter backoff of re-sends; undefined when retries are off. */
  readonly backoff: { readonly baseMs: number; readonly capMs: number } | undefined;
  /** Where leader ids seen in the map and in answers go. */
  readonly terms: LeaderTerms;
  /** Monotonic ms. Default `performance.now`. */
  readonly now?: (() => number) | undefined;
}

/** Longest wait for one server's `GET /v1/cluster`, in ms: a hung server must not hold up routing for long. */
const MAP_TIMEOUT_MS = 2_000;

/** Failures after which nothing was sent: safe to re-send anything anywhere. */
const NOT_SENT = ["ECONNREFUSED"];

/**
 * The HTTP transport of a cluster client: every call goes through the {@link ClusterRouter} to
 * its namespace's shard leader, from a {@link ShardMap}, and a lease in an answer that names a
 * term the {@link LeaderTerms} do not know makes the map be fetched again, so a leader change is
 * known soon after any answer shows it (ordered by the map's epochs, never by the answer).
 */
export class ClusterTransport {
  readonly map: ShardMap;
  readonly #options: ClusterTransportOptions;
  readonly #router: ClusterRouter;
  readonly #now: () => number;

  constructor(options: ClusterTransportOptions) {
    this.#options = options;
    this.#now = options.now ?? (() => performance.now());
    this.map = new ShardMap({ seeds: options.seeds, fetch: this.#fetchMap, terms: options.terms, now: this.#now });
    this.#router = new ClusterRouter({ map: this.map, now: this.#now, backoff: options.backoff });
  }

  /**
   * One operation, routed. A lock's budget for waits is its `acquireTimeoutMs` (a re-send waits
   * only what is left of it, under the same `requestId`); other calls' is `requestTimeoutMs`.
   * `first` is an answer the single-server path already received (its first `421`).
   */
  call<T>(namespace: string | undefined, operation: string, path: string, body: unknown, validator: Validator<T>, options: CallOptions | undefined, first?: RoutedAnswer): Promise<T> {
    const signal = options?.signal;
    // A wait (wait-for-locks) spends its own acquireTimeoutMs as a lock does, and is re-sent the same way.
    const lock = operation === "lock" || operation === "wait-for-locks" ? (body as LockRequest) : undefined;
    const json = body === undefined ? undefined : JSON.stringify(body);
    const method = body === undefined ? "GET" : "POST";
    const { timeoutMs } = this.#options;
    let sent = first !== undefined;
    return this.#router
      .route({
        namespace,
        budgetMs: lock === undefined ? timeoutMs : (lock.acquireTimeoutMs ?? 0),
        signal,
        resendAfter: resendAfter(operation, lock, body),
        attempt: (target, remainingMs) => {
          const wait = Math.max(0, Math.ceil(remainingMs));
          // A re-sent lock waits what is left of its own deadline, under the same requestId.
          const text = lock !== undefined && (sent || wait < (lock.acquireTimeoutMs ?? 0)) ? JSON.stringify({ ...lock, acquireTimeoutMs: wait }) : json;
          sent = true;
          return this.#exchange(target, method, path, text, lock === undefined ? timeoutMs : wait + timeoutMs, signal);
        },
        first: first === undefined ? undefined : { target: this.#options.seeds[0]!, answer: first },
      })
      .then(
        (answer) => {
          const value = checkedAnswer(answer.status, answer.text, operation, validator);
          if (namespace !== undefined) this.#noteLease(namespace, value);
          return value;
        },
        (err: unknown) => {
          throw transportError(err, operation, signal);
        },
      );
  }

  /**
   * `lock-batch`, routed: `421` is followed (nothing ran), a refused connection is re-sent
   * elsewhere; a `503` or a failure after sending rejects `UNAVAILABLE` at once, and the lock
   * batcher re-sends each entry alone (routed, with what is left of its own wait).
   */
  async lockBatch(
    namespace: string,
    body: LockBatchRequest,
    onResult: LockBatchResultListener,
    options: CallOptions & { readonly onStarted?: (() => void) | undefined },
    first?: RoutedAnswer,
  ): Promise<void> {
    const signal = options.signal;
    const operation = "lock-batch";
    const longest = body.requests.reduce((m, r) => Math.max(m, r.acquireTimeoutMs ?? 0), 0);
    const text = JSON.stringify({ requests: body.requests, compact: true });
    const lines = new LockBatchLineReader(body.requests, (line) => {
      if ("result" in line && line.result.status === "acquired") this.#noteLease(namespace, line.result);
      onResult(line);
    });
    let streaming = false;
    let answer: RoutedAnswer;
    try {
      answer = await this.#router.route({
        namespace,
        budgetMs: 0,
        signal,
        resendAfter: (err) => !streaming && NOT_SENT.includes(errorCode(err) ?? ""),
        attempt: (target) => {
          const errorBody: Buffer[] = [];
          let status = 0;
          return dispatchExchange(
            this.#options.dispatcher,
            {
              origin: target.origin,
              path: target.prefix + operationPath(namespace, operation),
              method: "POST",
              headers: this.#options.headers,
              body: text,
              headersTimeout: this.#options.timeoutMs,
              bodyTimeout: longest + this.#options.timeoutMs,
            },
            signal,
            {
              start: (statusCode) => {
                status = statusCode;
                if (status !== 200) return;
                streaming = true;
                options.onStarted?.();
              },
              data: (chunk) => (status === 200 ? lines.push(chunk) : void errorBody.push(chunk)),
              end: () => {
                if (status === 200) lines.end();
                return { status, text: Buffer.concat(errorBody).toString("utf8") };
              },
            },
          );
        },
        first: first === undefined ? undefined : { target: this.#options.seeds[0]!, answer: first },
      });
    } catch (err) {
      throw transportError(err, operation, signal);
    }
    if (answer.status === 200) return;
    if (answer.status === 404) throw new LeaseholdError("NOT_FOUND", "lock-batch: the server does not have lock batches (404)", { status: 404 });
    throw errorFromAnswer(answer.status, answer.text, operation);
  }

  /** One exchange with one server: status, body and `retry-after`. */
  #exchange(target: ServerTarget, method: "GET" | "POST", path: string, body: string | undefined, timeoutMs: number, signal: AbortSignal | undefined): Promise<RoutedAnswer> {
    const chunks: Buffer[] = [];
    let retryAfterMs: number | undefined;
    const request: Dispatcher.DispatchOptions = {
      origin: target.origin,
      path: target.prefix + path,
      method,
      headers: method === "POST" ? this.#options.headers : this.#options.getHeaders,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    };
    if (body !== undefined) request.body = body;
    return dispatchExchange(this.#options.dispatcher, request, signal, {
      start: (status, headers) => {
        if (status === 503) retryAfterMs = retryAfterHeader(headers["retry-after"]);
      },
      data: (chunk) => void chunks.push(chunk),
      end: (status) => ({ status, text: Buffer.concat(chunks).toString("utf8"), retryAfterMs }),
    });
  }

  readonly #fetchMap = (target: ServerTarget): Promise<ClusterResponse> =>
    this.#exchange(target, "GET", "/v1/cluster", undefined, Math.min(this.#options.timeoutMs, MAP_TIMEOUT_MS), undefined).then((answer) =>
      checkedAnswer(answer.status, answer.text, "cluster", responseValidators.cluster),
    );

  /**
   * An answer with a lease names a term of the namespace's shard, but carries no epoch: it cannot
   * end the term the map knows (a deposed leader's late answer would). A term the client has not
   * seen means the map is behind: it is fetched again (at most every `minIntervalMs`), and its
   * epochs decide.
   */
  #noteLease(namespace: string, value: unknown): void {
    if (typeof value !== "object" || value === null || !("lease" in value)) return;
    const { lease } = value;
    if (typeof lease !== "object" || lease === null || !("leaderId" in lease) || typeof lease.leaderId !== "string") return;
    const shard = this.map.shardOf(namespace);
    if (shard !== undefined && !this.#options.terms.knows(shard, lease.leaderId)) void this.map.refresh();
  }
}

/** Which failures with no answer a call may be re-sent after: those after which re-sending cannot do a thing twice. */
function resendAfter(operation: string, lock: LockRequest | undefined, body: unknown): (err: unknown) => boolean {
  // A lock with a requestId is never granted twice; transactions/start would start more
  // transactions, and a lock without a requestId could be granted twice, unless nothing was sent.
  // A timestamp lease without a requestId would hold a second timestamp; a wait acquires nothing.
  const once = operation === "transactions/start" || (operation === "timestamp-leases" && (body as { requestId?: unknown }).requestId === undefined);
  const safe = once || (operation === "lock" && lock !== undefined && lock.requestId === undefined) ? NOT_SENT : CONNECTION_ERRORS;
  return (err) => safe.includes(errorCode(err) ?? "");
}
