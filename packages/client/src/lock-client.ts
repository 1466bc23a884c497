import {
  LeaseholdError,
  LIMITS,
  validateNamespace,
  type Lease,
  type LockAcquiredResponse,
  type LockService,
  type LockWatchSince,
  type LockWatchUpdate,
  type LockSpec,
  type RefreshResponse,
  type StartTransactionsResponse,
  type TimestampsResponse,
  type WaitForLocksResponse,
  type WaitSpec,
} from "@leasehold/protocol";
import type { Observable } from "rxjs";
import type { WatchedStart } from "./watched-start-batch.js";
import { watchLocks, type WatchLocksOptions } from "./watch-locks.js";
import { requestIdSource } from "./request-ids.js";
import { acquireLocks, type AcquireResult } from "./acquire-locks.js";
import { clientChannels, clientMessages, lockCallObserved } from "./client-diagnostics.js";
import { closedError, positiveCount } from "./client-errors.js";
import type { LeaderWatch } from "./client-refresher.js";
import { ClientStats, type ClientStatsSnapshot } from "./client-stats.js";
import { HttpLockService } from "./http-lock-service.js";
import { lockClientParts, type LockClientParts } from "./lock-client-parts.js";
import { observeLockCall } from "./observe-lock-call.js";
import type { HttpLockClientOptions, LockClientOptions } from "./lock-client-options.js";
import type { LockOptions, SignalOptions, StartedTransactionInfo } from "./lock-options.js";
import type { LostLock } from "./lost-lock.js";
import { leaseAfterWait } from "./lease-after-wait.js";
import { GrantedLock, LOCK_TIMEOUT, type LockResult } from "./lock-result.js";
import { optionsThenFn } from "./options-then-fn.js";
import { TimestampLease } from "./timestamp-lease.js";
import { waitForLocks, type WaitForLocksOptions } from "./wait-for-locks.js";
import { runWithLock, type WithLockOptions, type WithLockResult, type WithLockWork } from "./with-lock.js";

/**
 * A leasehold client bound to one namespace, over any {@link LockService}. It keeps held locks
 * alive (the refresher), releases them off the caller's path (`tryUnlock`, batched), and
 * coalesces concurrent timestamp, transaction and refresh calls into one call at a time.
 * `await using client = LockClient.http(…)` closes it at the end of the scope.
 */
export class LockClient implements AsyncDisposable {
  /** The namespace every call goes to. */
  readonly namespace: string;
  readonly #service: LockService;
  readonly #onClose: () => Promise<void>;
  readonly #stats = new ClientStats();
  readonly #now: () => number;
  /** Where `lock` hands a grant its caller no longer wants. */
  readonly #giveBack = (tokens: readonly string[]): void => this.tryUnlock(tokens);
  /** How a granted lock's `await using` releases it: unlock and wait, unless the client is closed. */
  readonly #disposeGrant = (token: string): Promise<unknown> => (this.#closed === undefined ? this.unlock([token]) : Promise.resolve());
  /** `requestId`s for lock calls that bring none. */
  readonly #newRequestId = requestIdSource();
  readonly #refresher: LockClientParts["refresher"];
  readonly #unlocker: LockClientParts["unlocker"];
  readonly #timestamps: LockClientParts["timestamps"];
  readonly #transactions: LockClientParts["transactions"];
  readonly #watchedStarts: LockClientParts["watchedStarts"];
  readonly #refresh: LockClientParts["refresh"];
  readonly #refreshIfVoid: LockClientParts["refreshIfVoid"];
  /** Where `lock` requests go: the lock batcher when `lockBatching` is on, else the service. */
  readonly #locks: LockClientParts["locks"];
  readonly #stopWatchingLeaders: () => void;
  #closed: Promise<void> | undefined;

  /** A client over the HTTP protocol (undici). `close()` closes its connections. */
  static http(options: HttpLockClientOptions): LockClient {
    validateNamespace(options.namespace); // before opening any connection
    const service = new HttpLockService(options);
    return new LockClient(service, options, () => service.close(), false, service);
  }

  /** A client over any `LockService`, e.g. the server's `createLockService()` in the same process. */
  static embedded(service: LockService, options: LockClientOptions): LockClient {
    return new LockClient(service, options, async () => undefined, true);
  }

  private constructor(service: LockService, options: LockClientOptions, onClose: () => Promise<void>, inProcess: boolean, leaders?: LeaderWatch) {
    this.namespace = validateNamespace(options.namespace);
    this.#service = service;
    this.#onClose = onClose;
    this.#now = options.now ?? (() => performance.now());
    const parts = lockClientParts({ service, namespace: this.namespace, options, inProcess, leaders, stats: this.#stats, now: this.#now, giveBack: this.#giveBack });
    this.#timestamps = parts.timestamps;
    this.#transactions = parts.transactions;
    this.#watchedStarts = parts.watchedStarts;
    this.#refresh = parts.refresh;
    this.#refresher = parts.refresher;
    this.#refreshIfVoid = parts.refreshIfVoid;
    this.#stopWatchingLeaders = parts.stopWatchingLeaders;
    this.#locks = parts.locks;
    this.#unlocker = parts.unlocker;
  }

  /**
   * Tokens the client learns it no longer holds, with the reason: a refresh did not return them
   * (the server released them), a refresh was answered under another `leaderId`: the server
   * restarted or (in a cluster) the namespace's shard changed leader (`leader-changed`; when the
   * shard map shows a newer term first, the tokens are refreshed at once, so this comes within a
   * refresh tick and round trip), their lease ran out while refreshes failed, or they outstayed
   * `maxTenureMs`. Only a refresh answer or a lapsed lease makes a token lost.
   * Completes on `close()`.
   */
  get lostLocks(): Observable<LostLock> {
    return this.#refresher.lost;
  }

  /**
   * Acquire `locks`. Resolves with the protocol's answer: `{ status: "acquired", token, lease,
   * acquired }` (each acquired lock with its fencing token) or `{ status: "timeout" }` when the
   * wait ended without a grant; a timeout is an answer, not an error. A granted token is refreshed
   * until `unlock`/`tryUnlock`, or until the end of an `await using` scope: both answers are
   * `AsyncDisposable` (disposing of a grant awaits `unlock` of its token; of a timeout, nothing).
   * Rejects with `CANCELLED` when `signal` aborts (nothing stays held).
   *
   * ```ts
   * await using res = await client.lock([{ descriptor: "report", mode: "exclusive" }], { acquireTimeoutMs: 5_000 });
   * if (res.status === "timeout") return;
   * await writeReport(res.acquired[0]!.fencingToken); // unlocked when the scope ends, even on a throw
   * ```
   */
  lock(locks: readonly LockSpec[], options: LockOptions = {}): Promise<LockResult> {
    if (this.#closed !== undefined) return Promise.reject(closedError());
    if (lockCallObserved()) return observeLockCall(this.namespace, locks, options, this.#now, this.#newRequestId, this.#acquire);
    // Chained rather than awaited: see acquireLocks on why each async frame counts here.
    return acquireLocks(this.#locks, this.namespace, locks, options, this.#now, this.#giveBack, this.#newRequestId).then(this.#granted);
  }

  /** `lock` for a call observed through the diagnostics channels (see {@link observeLockCall}). */
  readonly #acquire = (locks: readonly LockSpec[], options: LockOptions): Promise<LockResult> =>
    acquireLocks(this.#locks, this.namespace, locks, options, this.#now, this.#giveBack, this.#newRequestId).then(this.#granted);

  /** Track a grant (almost every grant comes well inside its lease: only a long wait costs a refresh). */
  readonly #granted = ({ response, sentAt }: AcquireResult): LockResult | Promise<LockResult> => {
    if (response.status !== "acquired") return LOCK_TIMEOUT;
    if (this.#now() - sentAt <= response.lease.validForMs / 2) return this.#keep(response, response.lease, sentAt);
    return leaseAfterWait(this.#refresh, response, sentAt, this.#now).then(([lease, from]) => this.#keep(response, lease, from));
  };

  /** Start refreshing a grant, unless the client closed meanwhile: then give it back and say so. */
  #keep(response: LockAcquiredResponse, lease: Lease, leaseFrom: number): GrantedLock {
    if (this.#closed !== undefined) {
      // Nobody would refresh it: give it back rather than let it block others for a lease.
      this.tryUnlock([response.token]);
      throw new LeaseholdError("UNAVAILABLE", "the LockClient was closed while the lock was being acquired; it was released");
    }
    this.#refresher.track(response.token, lease, leaseFrom);
    this.#refreshIfVoid(lease);
    return new GrantedLock(response, this.#disposeGrant);
  }

  /**
   * Release `tokens` and wait for the answer: the tokens that were held and are now released.
   * They stop being refreshed first, synchronously, whatever the outcome. Concurrent `unlock`
   * calls of this client, and the releases queued by {@link tryUnlock}, share one `unlock` call at
   * a time (never two in flight): each caller still gets its own answer, or the error of the call
   * that carried its tokens. `signal` abandons only the wait for the answer (`CANCELLED`): the
   * tokens are released all the same. Prefer {@link tryUnlock} on hot paths.
   */
  async unlock(tokens: readonly string[], options: SignalOptions = {}): Promise<readonly string[]> {
    this.#checkOpen();
    const released = this.#unlocker.unlock(this.namespace, tokens, options.signal);
    if (clientChannels.lockRelease.hasSubscribers) clientChannels.lockRelease.publish(clientMessages.lockRelease(this.namespace, tokens, "unlock"));
    return released;
  }

  /**
   * Release `tokens` in the background and return at once; never throws, even for bad input.
   * They stop being refreshed before this returns. Concurrent calls are batched into one `unlock`
   * call at a time; a failed call is logged (token count only) and not retried: the locks then
   * lapse with their lease. `close()` waits for every release queued here to be sent.
   */
  tryUnlock(tokens: readonly string[]): void {
    this.#unlocker.tryUnlock(this.namespace, tokens);
    if (clientChannels.lockRelease.hasSubscribers) clientChannels.lockRelease.publish(clientMessages.lockRelease(this.namespace, tokens, "tryUnlock"));
  }

  /**
   * Whether this client still holds `token` by its lease, answered locally with no call: true
   * while the token is tracked here (granted by `lock` or started by `startTransaction(s)`, not
   * given to `unlock`/`tryUnlock`, not reported on `lostLocks`) and its lease, measured from
   * before the request that granted or last renewed it, has not run out on this client's clock
   * (`now`). A transaction asks this for its locks just before it commits, so a valid lease costs
   * no round-trip. A true answer is a promise only until the lease ends: the lock can be lost
   * right after, which is why the server keeps a token for `leaseMs`, longer than `validForMs`.
   */
  isHeld(token: string): boolean {
    const end = this.#refresher.expiresAt(token);
    return end !== undefined && this.#now() < end;
  }

  /**
   * Renew the leases of `tokens` now (the refresher does this on its own for held locks). Resolves
   * with the tokens still held and the new lease. Concurrent calls share one `refresh` call.
   */
  async refresh(tokens: readonly string[], options: SignalOptions = {}): Promise<RefreshResponse> {
    this.#checkOpen();
    if (tokens.length === 0) throw new LeaseholdError("INVALID_ARGUMENT", "refresh: tokens must not be empty", { path: "tokens" });
    return this.#refresh.submit({ tokens: [...tokens] }, options);
  }

  /** One fresh timestamp: greater than every timestamp and fencing token handed out before. */
  async freshTimestamp(options: SignalOptions = {}): Promise<number> {
    return (await this.freshTimestamps(1, options)).start;
  }

  /**
   * `count` (1..10,000) fresh timestamps as the range `{ start, count }`: the values `start`,
   * `start + 1`, …, `start + count - 1`. Concurrent calls share one `timestamps` call.
   */
  async freshTimestamps(count: number, options: SignalOptions = {}): Promise<TimestampsResponse> {
    this.#checkOpen();
    positiveCount(count, LIMITS.maxTimestampCount, "freshTimestamps");
    return this.#timestamps.submit(count, options);
  }

  /**
   * Start one transaction: its start timestamp and the token of its immutable-timestamp lock,
   * which the refresher keeps alive until you `tryUnlock` it (at commit or abort).
   */
  async startTransaction(options: SignalOptions = {}): Promise<StartedTransactionInfo> {
    const answer = await this.startTransactions(1, options);
    const first = answer.transactions[0];
    if (first === undefined) throw new LeaseholdError("BAD_RESPONSE", "transactions/start answered no transaction");
    return { ...first, immutableTimestamp: answer.immutableTimestamp };
  }

  /** Start `count` (1..1,000) transactions; see {@link startTransaction}. Concurrent calls share one call. */
  async startTransactions(count: number, options: SignalOptions = {}): Promise<StartTransactionsResponse> {
    this.#checkOpen();
    positiveCount(count, LIMITS.maxTransactionCount, "startTransactions");
    const sentAt = this.#now();
    const answer = await this.#transactions.submit(count, options);
    for (const txn of answer.transactions) this.#refresher.track(txn.token, answer.lease, sentAt);
    this.#refreshIfVoid(answer.lease);
    return answer;
  }

  /**
   * Start one transaction as {@link startTransaction} does, and learn the lock events on watched
   * descriptors (PROTOCOL.md "Lock watches") that happened before its start timestamp, after
   * `since` (or a snapshot when `since` is null or too old). A read cache validated by lock
   * watches needs both from one step; concurrent calls share one call.
   */
  async startWatchedTransaction(since: LockWatchSince | null, options: SignalOptions = {}): Promise<WatchedStart> {
    this.#checkOpen();
    const sentAt = this.#now();
    const started = await this.#watchedStarts.submit({ since }, options);
    this.#refresher.track(started.transaction.token, started.lease, sentAt);
    this.#refreshIfVoid(started.lease);
    return started;
  }

  /**
   * Watch the locks under `prefixes` in this namespace: an Observable of lock-event updates (a
   * snapshot first, then events), following the server while subscribed. See {@link watchLocks}
   * in watch-locks.ts for re-registration, gaps and errors.
   */
  watchLocks(prefixes: readonly string[], options: WatchLocksOptions = {}): Observable<LockWatchUpdate> {
    this.#checkOpen();
    return watchLocks(this.#service, this.namespace, prefixes, { now: this.#now, ...options });
  }

  /** The namespace's immutable timestamp: below it, no running or future transaction reads. */
  async immutableTimestamp(options: SignalOptions = {}): Promise<number> {
    this.#checkOpen();
    return (await this.#service.immutableTimestamp(this.namespace, {}, options)).immutableTimestamp;
  }

  /**
   * Wait until each of `locks` in turn could have been granted in its mode, without acquiring
   * anything (TimeLock's `waitForLocks`): the wait queues first-in-first-out as a lock request
   * would, behind everyone queued before it. Resolves `{ status: "free" }`, or `{ status:
   * "timeout" }` at `acquireTimeoutMs` (default 0); `signal` abandons it (`CANCELLED`). Use it to
   * wait for a holder to finish (a committing writer) without blocking those behind.
   */
  async waitForLocks(locks: readonly WaitSpec[], options: WaitForLocksOptions = {}): Promise<WaitForLocksResponse> {
    this.#checkOpen();
    return waitForLocks(this.#service, this.namespace, locks, options, this.#now, this.#newRequestId());
  }

  /**
   * Hold a fresh timestamp under `name` (`timestamp-leases`) and take `count` (0..10,000, default 0)
   * fresh timestamps above it. The refresher keeps the lease alive like a lock until you release
   * it (`await using`, `release()`, `unlock`/`tryUnlock` of its token). While it is held,
   * {@link minLeasedTimestamp} of `name`, from any client, answers no more than its `leased`.
   */
  async acquireTimestampLease(name: string, count = 0, options: SignalOptions = {}): Promise<TimestampLease> {
    this.#checkOpen();
    const service = this.#service;
    if (service.acquireTimestampLease === undefined) throw new LeaseholdError("NOT_FOUND", "acquireTimestampLease: this LockService does not offer timestamp-leases", {});
    const sentAt = this.#now();
    // A requestId makes a re-sent request answer the same lease instead of holding a second one.
    const answer = await service.acquireTimestampLease(this.namespace, { requestId: this.#newRequestId(), name, count }, options);
    this.#keepLease(answer.token, answer.lease, sentAt);
    return new TimestampLease(answer, this.#disposeGrant);
  }

  /** The smallest timestamp held under `name` in the namespace, or a fresh timestamp when none is. */
  async minLeasedTimestamp(name: string, options: SignalOptions = {}): Promise<number> {
    this.#checkOpen();
    const service = this.#service;
    if (service.minLeasedTimestamp === undefined) throw new LeaseholdError("NOT_FOUND", "minLeasedTimestamp: this LockService does not offer timestamp-leases", {});
    return (await service.minLeasedTimestamp(this.namespace, { name }, options)).minLeased;
  }

  /** Refresh a token this client was granted, unless the client closed meanwhile: then give it back. */
  #keepLease(token: string, lease: Lease, sentAt: number): void {
    if (this.#closed !== undefined) {
      this.tryUnlock([token]);
      throw new LeaseholdError("UNAVAILABLE", "the LockClient was closed while the lease was being acquired; it was released");
    }
    this.#refresher.track(token, lease, sentAt);
    this.#refreshIfVoid(lease);
  }

  /**
   * Run `fn` while holding `locks`, then release them with `tryUnlock` (whether `fn` resolves or
   * throws). Resolves `{ status: "acquired", value, lock }` with `fn`'s result, or
   * `{ status: "timeout" }` when the locks were not granted in time (then `fn` never ran); `fn`'s
   * errors are rethrown.
   *
   * **A lock can be lost while `fn` is still running**: a long GC pause, a network partition or a
   * server restart can end the lease, and another holder may then be granted the lock. `fn`
   * receives an `AbortSignal` that fires as soon as the client learns the lock is lost, or a
   * safety margin (`leaseMarginMs`) before the lease would lapse because refreshes failed, never
   * after; stop working when it fires. The signal cannot stop a write already on its way, so
   * protect the resource itself with the fencing token: it only ever grows, and a store that keeps
   * the highest token it has seen can refuse a stale holder:
   *
   * ```ts
   * const result = await client.withLock([{ descriptor: "report", mode: "exclusive" }], { acquireTimeoutMs: 5_000 },
   *   async (signal, lock) => {
   *     const fence = lock.acquired[0]!.fencingToken;
   *     const data = await compute({ signal });
   *     // UPDATE reports SET body = $1, fence = $2 WHERE id = 'report' AND fence < $2
   *     await store.writeIfNewer("report", data, fence);
   *   });
   * if (result.status === "timeout") console.log("someone else holds the report");
   * ```
   *
   * Arguments go locks, options, work, as in every recipe; the options may be left out
   * (`withLock(locks, fn)`: no wait, as `lock`'s default).
   */
  withLock<T>(locks: readonly LockSpec[], fn: WithLockWork<T>): Promise<WithLockResult<T>>;
  withLock<T>(locks: readonly LockSpec[], options: WithLockOptions, fn: WithLockWork<T>): Promise<WithLockResult<T>>;
  async withLock<T>(locks: readonly LockSpec[], optionsOrFn: WithLockOptions | WithLockWork<T>, work?: WithLockWork<T>): Promise<WithLockResult<T>> {
    const [options, fn] = optionsThenFn<WithLockOptions, WithLockWork<T>>(optionsOrFn, work, "withLock");
    return runWithLock(
      {
        lock: (l, o) => this.lock(l, o),
        tryUnlock: (t) => this.tryUnlock(t),
        lostLocks: this.lostLocks,
        leaseEnd: (token) => this.#refresher.expiresAt(token),
        now: this.#now,
      },
      locks,
      options,
      fn,
    );
  }

  /** Counters: unlock batching, failures, refreshes, lost locks. */
  stats(): ClientStatsSnapshot {
    return this.#stats.snapshot();
  }

  /**
   * Stop the refresher (held locks are reported `client-closed` and lapse with their lease), send
   * every release queued by `tryUnlock` and wait for those calls, then close the transport's
   * connections. Idempotent. Other calls afterwards reject with `UNAVAILABLE`. A service that never
   * answers holds `close()` up for as long as the transport waits (`requestTimeoutMs` over HTTP).
   */
  close(): Promise<void> {
    this.#closed ??= (async () => {
      this.#stopWatchingLeaders();
      this.#refresher.close();
      await this.#unlocker.flushed();
      await this.#onClose();
    })();
    return this.#closed;
  }

  /** `close()`, for `await using client = LockClient.http(…)`. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  #checkOpen(): void {
    if (this.#closed !== undefined) throw closedError();
  }
}
