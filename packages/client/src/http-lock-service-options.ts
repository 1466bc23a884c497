import type { Dispatcher } from "undici";

/** How the transport retries; see {@link HttpLockServiceOptions.retry}. */
export interface RetryOptions {
  /**
   * Retries after the first attempt. Default 6: the first retry goes at once (a reset keep-alive
   * socket usually just needs a new connection), the rest wait a random time below a ceiling that
   * starts at `minTimeoutMs` and doubles (full jitter, see `random`), which rides out up to about
   * 3 s of outage (a server restart), 1.5 s on average.
   */
  readonly maxRetries?: number | undefined;
  /** First backoff ceiling, in ms; doubles each retry. Default 100: a restarting server is back quickly. */
  readonly minTimeoutMs?: number | undefined;
  /** Largest backoff ceiling, in ms: no wait is longer. Default 2,000. */
  readonly maxTimeoutMs?: number | undefined;
  /**
   * Where the backoff's jitter comes from: a uniform number in [0, 1). Default `Math.random`.
   * Each wait is drawn from `[0, min(maxTimeoutMs, minTimeoutMs · 2^(retry - 1)))` ("full
   * jitter", see `fullJitterBackoff`), so clients cut off together do not retry in step. Tests
   * pass a fixed or recorded source.
   */
  readonly random?: (() => number) | undefined;
}

/** Options of {@link HttpLockService}. */
export interface HttpLockServiceOptions {
  /**
   * Where the server listens, e.g. `http://127.0.0.1:7878`; a path prefix is kept. The one-server
   * form: give this or {@link baseUrls}, not both. With one server the client sends everything
   * there and asks for no shard map, unless the server answers `421 NOT_LEADER` (it is a member
   * of a cluster): the client then routes as with `baseUrls` (docs/client.md "Clusters").
   */
  readonly baseUrl?: string | URL | undefined;
  /**
   * The servers of a cluster (any members; the client learns the rest from `GET /v1/cluster`).
   * With more than one, each call goes to its namespace's shard leader, `421` answers are followed
   * and `503` answers and connection failures are retried on other servers with full-jitter
   * backoff within the call's own deadline (docs/client.md "Clusters"). A list of one is the same
   * as `baseUrl`. Default: none (give `baseUrl`); an empty list, repeats, or an entry that is not
   * an http(s) URL are refused with `INVALID_ARGUMENT`.
   */
  readonly baseUrls?: readonly (string | URL)[] | undefined;
  /**
   * The undici dispatcher requests go through, as in undici itself. Default: a keep-alive `Agent`
   * owned (and closed) by this transport. A dispatcher you pass is wrapped for retries but never
   * closed by `close()`: it is yours.
   */
  readonly dispatcher?: Dispatcher | undefined;
  /**
   * Retries of connection failures and `503` answers, with exponential backoff, by undici's
   * `RetryAgent`. `4xx` answers are never retried; a `lock` is retried only when it carries a
   * `requestId` (the server then never acquires twice); `transactions/start`, which a retry could
   * repeat, only when the connection was refused or the server answered 503. `false` turns retries
   * off. Default: {@link RetryOptions}' defaults. In cluster mode the same rules pick what may be
   * re-sent, `minTimeoutMs`/`maxTimeoutMs` shape the full-jitter backoff, and the call's deadline
   * (not `maxRetries`) bounds the re-sends; `421` answers are followed even with `false`.
   */
  readonly retry?: RetryOptions | false | undefined;
  /** Headers sent with every request, e.g. `authorization`. Default: none. */
  readonly headers?: Readonly<Record<string, string>> | undefined;
  /**
   * Longest wait for the answer's headers of any call but `lock`, in ms. Default 10,000: long
   * enough for a loaded server, short enough that a hung one does not stall the refresher for
   * long. A `lock` waits its own `acquireTimeoutMs` plus this.
   */
  readonly requestTimeoutMs?: number | undefined;
}
