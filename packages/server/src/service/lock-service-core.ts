import {
  LeaseholdError, requestValidators, validateNamespace, onAbort,
  type CallOptions, type HealthResponse, type ImmutableTimestampResponse, type LockBatchRequest, type LockBatchResultListener, type LockCancelRequest,
  type LockCancelResponse, type LockResponse, type LockWatchesResponse, type LockWatchUpdate, type RefreshResponse, type StartTransactionsResponse,
  type TimestampsResponse, type UnlockResponse, type TimestampLeaseMinResponse, type TimestampLeaseResponse, type WaitForLocksResponse,
} from "@leasehold/protocol";
import { pino, type Logger } from "pino";
import { LockEngine } from "../engine/lock-engine.js";
import { PendingLock } from "../engine/pending-lock.js";
import type { SettledOutcome } from "../engine/lock-table.js";
import { createFileTimestampReserver } from "../timestamps/file-timestamp-reserver.js";
import { createMemoryTimestampReserver, type TimestampReserver } from "../timestamps/timestamp-reserver.js";
import { DeadlineTimer, nodeTimer } from "./deadline-timer.js";
import { awaitLockEvents, type WaitingPolls } from "./await-lock-events.js";
import type { LockServiceOptions } from "./embedded-lock-service.js";
import { ActivityFeed } from "./activity-feed.js";
import { logLeaseLapse } from "./log-admin-events.js";
import { runLockBatch, type LockBatchRun } from "./run-lock-batch.js";
import { serverChannels, serverMessages } from "./server-diagnostics.js";
import { cancelled, followSignal, type WaitingLockHandle } from "./waiting-lock-handle.js";
import { answerCallers, cancelCallers, WaitingCallers } from "./waiting-callers.js";
import { VERSION } from "../version.js";

/**
 * The serving half of `InMemoryLockService` (in-memory-lock-service.ts): its state, the engine and
 * timer it drives, and the calls clients make on every request (lock, waits, batches, cancel,
 * unlock, refresh, timestamps, transactions, watches, health). Abstract: only
 * `InMemoryLockService`, which adds metrics, inspection, revoke, the replication side and close,
 * is built; the state it needs is `protected`. One class, not a collaborator, so the request
 * paths reach the engine and timer with no extra hop.
 */
export abstract class LockServiceCore {
  /** The leader id of this process, in every lease. */
  readonly leaderId: string;
  /** This server's id (health's `serverId`). */
  readonly serverId: string;
  protected readonly engine: LockEngine;
  protected readonly timer: DeadlineTimer;
  protected readonly reserver: TimestampReserver;
  private readonly version: string;
  protected readonly logger: Logger;
  /** Callers of waiting requests; the last one to abandon takes the request out of the engine's queues (unless closing). */
  private readonly waiting = new WaitingCallers((pending) => {
    if (this.closing !== null) return;
    this.engine.abandon(pending);
    this.timer.arm(this.engine.nextDeadline());
  });
  private readonly clock: () => number;
  /** Sets a timer on {@link clock}'s time (see `LockServiceOptions.setTimer`). */
  protected readonly setTimer: (fn: () => void, ms: number) => () => void;
  private readonly watchTtlMs: number;
  protected readonly polls: WaitingPolls = new Set();
  /** Lapses, revocations, grants and waits for the status page (`GET /v1/events`). */
  readonly activity: ActivityFeed;
  protected closing: Promise<void> | null = null;
  protected closedError = new LeaseholdError("UNAVAILABLE", "the lock server is shutting down");

  /** See {@link LockServiceOptions} for every option and its default. */
  constructor(options: LockServiceOptions = {}) {
    const logger: Logger = options.logger ?? pino({ level: "silent" });
    this.logger = logger;
    const clock = options.clock ?? (() => performance.now());
    this.version = options.version ?? VERSION;
    this.reserver =
      options.timestampReserver ??
      (options.dataDir === undefined
        ? createMemoryTimestampReserver()
        : createFileTimestampReserver({ dataDir: options.dataDir, reserve: options.timestampReserve }));
    this.engine = new LockEngine({
      clock,
      leaseMs: options.leaseMs,
      validForMs: options.validForMs,
      leaderId: options.leaderId,
      reserver: this.reserver,
      maxWaitingPerNamespace: options.maxWaitingPerNamespace,
      gate: options.servingGate,
      replica: options.replica,
      replicationSink: options.replicationSink,
      onSettled: (pending, outcome) => this.settle(pending, outcome),
      onLeaseLapse: (namespace, descriptors, lapse) => {
        logLeaseLapse(logger, namespace, descriptors, lapse);
        this.activity.lapse(namespace, descriptors, lapse);
        if (serverChannels.leaseLapse.hasSubscribers) serverChannels.leaseLapse.publish(serverMessages.leaseLapse(namespace, descriptors, lapse));
      },
    });
    this.clock = clock;
    this.setTimer = options.setTimer ?? nodeTimer;
    this.watchTtlMs = options.watchTtlMs ?? 60_000;
    if (!Number.isSafeInteger(this.watchTtlMs) || this.watchTtlMs < 1) throw new RangeError(`watchTtlMs must be a positive integer (got ${this.watchTtlMs})`);
    this.activity = new ActivityFeed({ grantsTotal: () => this.engine.metrics().grantsTotal });
    this.leaderId = this.engine.leaderId;
    this.serverId = options.serverId ?? this.leaderId;
    this.timer = new DeadlineTimer(clock, () => {
      if (this.closing !== null) return;
      this.engine.advance();
      this.timer.arm(this.engine.nextDeadline());
    }, this.setTimer);
  }

  /**
   * Validate and acquire. Requests that must wait resolve later; aborting `signal` before the answer
   * abandons the request (released, rejected `CANCELLED`) once every caller sharing its requestId has gone.
   */
  async lock(namespace: string, request: unknown, options?: CallOptions): Promise<LockResponse> {
    return followSignal(options?.signal, () => this.validated(namespace, requestValidators.lock.parse, request), () => this.beginLock(namespace, request));
  }

  /** Validate and wait (`wait-for-locks`); aborting `signal` abandons this caller's wait, as for `lock`. */
  async waitForLocks(namespace: string, request: unknown, options?: CallOptions): Promise<WaitForLocksResponse> {
    return followSignal(options?.signal, () => this.validated(namespace, requestValidators["wait-for-locks"].parse, request), () => this.beginWaitForLocks(namespace, request));
  }

  /** {@link waitForLocks} for hosts that track cancellation themselves (see {@link beginLock}). */
  beginWaitForLocks(namespace: string, request: unknown): WaitForLocksResponse | WaitingLockHandle<WaitForLocksResponse> {
    this.checkOpen();
    const ns = validateNamespace(namespace);
    const attempt = this.engine.waitForLocks(ns, requestValidators["wait-for-locks"].parse(request));
    this.timer.arm(this.engine.nextDeadline());
    return attempt instanceof PendingLock ? this.waiting.join<WaitForLocksResponse>(attempt) : attempt;
  }

  /** Validate and hold a timestamp under a lease name (`timestamp-leases`). */
  async acquireTimestampLease(namespace: string, request: unknown, _options?: CallOptions): Promise<TimestampLeaseResponse> {
    this.checkOpen();
    const ns = validateNamespace(namespace);
    const answer = this.engine.acquireTimestampLease(ns, requestValidators["timestamp-leases"].parse(request));
    this.timer.arm(this.engine.nextDeadline());
    return answer;
  }

  /** Validate and answer the smallest timestamp held under a lease name (`timestamp-leases/min`). */
  async minLeasedTimestamp(namespace: string, request: unknown, _options?: CallOptions): Promise<TimestampLeaseMinResponse> {
    this.checkOpen();
    const ns = validateNamespace(namespace);
    return this.engine.minLeasedTimestamp(ns, requestValidators["timestamp-leases/min"].parse(request).name);
  }

  /** The smallest timestamp held under any lease name, without taking a number (see `LockEngine.leaseFloor`). */
  leaseFloor(namespace: string): number | undefined {
    return this.engine.leaseFloor(namespace);
  }

  /**
   * Validate and acquire, answering at once when the engine can, or a {@link WaitingLock} when the
   * request must wait. A host that tracks cancellation itself (the HTTP server has a connection,
   * not an AbortSignal) uses this to avoid creating an AbortController per request, which costs
   * more than the whole grant.
   */
  beginLock(namespace: string, request: unknown): LockResponse | WaitingLockHandle {
    this.checkOpen();
    const ns = validateNamespace(namespace);
    const body = requestValidators.lock.parse(request);
    const attempt = this.engine.lock(ns, body);
    this.timer.arm(this.engine.nextDeadline());
    if (attempt.status !== "waiting") {
      if (attempt.status === "acquired" && serverChannels.lockGrant.hasSubscribers) {
        serverChannels.lockGrant.publish(serverMessages.lockGrant(ns, body.requestId, attempt, false));
      }
      return attempt;
    }
    return this.waiting.join<LockResponse>(attempt);
  }

  /**
   * Run a lock batch (see {@link EmbeddedLockService.lockBatch}): the whole-batch checks reject
   * before any entry runs, then every entry is reported to `onResult` as it resolves.
   */
  lockBatch(namespace: string, request: LockBatchRequest | unknown, onResult: LockBatchResultListener, options?: CallOptions): Promise<void> {
    try {
      return this.beginLockBatch(namespace, request, onResult, options?.signal).done;
    } catch (err) {
      return Promise.reject(err instanceof Error ? err : new Error(String(err)));
    }
  }

  /**
   * `lockBatch` with its whole-batch checks thrown synchronously (closed service, bad namespace,
   * bad envelope), before any entry runs or `onResult` is called. The HTTP layer needs that line
   * drawn: a whole-batch error is an ordinary error answer, while once the first entry runs the
   * answer is a `200` stream of lines.
   */
  beginLockBatch(namespace: string, request: unknown, onResult: LockBatchResultListener, signal?: AbortSignal): LockBatchRun {
    this.checkOpen();
    const ns = validateNamespace(namespace);
    const { requests } = requestValidators["lock-batch"].parse(request);
    if (signal?.aborted === true) throw cancelled();
    const run = runLockBatch((entry) => this.beginLock(ns, entry), requests, onResult, (err) => {
      this.logger.error({ err }, "internal error while running a lock batch entry");
    });
    if (signal !== undefined) {
      const off = onAbort(signal, () => run.abandon());
      void run.done.then(off, off);
    }
    return run;
  }

  /**
   * Give up the lock request with this `requestId`: a waiting one leaves every queue (every caller
   * sharing it, a batch entry or a single `lock`, is answered `CANCELLED`), a granted one is
   * released. `{ cancelled: false }` when no request with that id waits or is held.
   */
  async cancelLock(namespace: string, request: LockCancelRequest | unknown, _options?: CallOptions): Promise<LockCancelResponse> {
    this.checkOpen();
    const ns = validateNamespace(namespace);
    const { requestId } = requestValidators["lock-cancel"].parse(request);
    const live = this.engine.liveRequest(ns, requestId);
    if (live === undefined) return { cancelled: false };
    if (typeof live === "string") {
      this.engine.unlock(ns, { tokens: [live] });
      this.timer.arm(this.engine.nextDeadline());
      return { cancelled: true };
    }
    const callers = this.waiting.take(live);
    this.engine.abandon(live);
    this.timer.arm(this.engine.nextDeadline());
    const error = new LeaseholdError("CANCELLED", "the lock request was cancelled by lock-cancel", { requestId });
    if (callers !== undefined) cancelCallers(callers, live.request.waitOnly, error);
    return { cancelled: true };
  }

  /** Validate and release tokens; idempotent. */
  async unlock(namespace: string, request: unknown, _options?: CallOptions): Promise<UnlockResponse> {
    this.checkOpen();
    const ns = validateNamespace(namespace);
    return this.engine.unlock(ns, requestValidators.unlock.parse(request));
  }

  /** Validate and renew the leases of tokens still held. */
  async refresh(namespace: string, request: unknown, _options?: CallOptions): Promise<RefreshResponse> {
    this.checkOpen();
    const ns = validateNamespace(namespace);
    return this.engine.refresh(ns, requestValidators.refresh.parse(request));
  }

  /** Validate and hand out a range of fresh timestamps. */
  async timestamps(namespace: string, request: unknown, _options?: CallOptions): Promise<TimestampsResponse> {
    this.checkOpen();
    const ns = validateNamespace(namespace);
    return this.engine.timestamps(ns, requestValidators.timestamps.parse(request));
  }

  /** Validate and start transactions, each holding an immutable-timestamp lock. */
  async startTransactions(namespace: string, request: unknown, _options?: CallOptions): Promise<StartTransactionsResponse> {
    this.checkOpen();
    const ns = validateNamespace(namespace);
    const answer = this.engine.startTransactions(ns, requestValidators["transactions/start"].parse(request));
    this.timer.arm(this.engine.nextDeadline());
    return answer;
  }

  /** Validate and answer the namespace's immutable timestamp. */
  async immutableTimestamp(namespace: string, request: unknown, _options?: CallOptions): Promise<ImmutableTimestampResponse> {
    this.checkOpen();
    const ns = validateNamespace(namespace);
    requestValidators["immutable-timestamp"].parse(request);
    return this.engine.immutableTimestamp(ns);
  }

  /** Validate and watch prefixes until the watch TTL from now. */
  async lockWatches(namespace: string, request: unknown, _options?: CallOptions): Promise<LockWatchesResponse> {
    this.checkOpen();
    const ns = validateNamespace(namespace);
    const { prefixes } = requestValidators["lock-watches"].parse(request);
    return { prefixes: this.engine.registerLockWatches(ns, prefixes, this.watchTtlMs) };
  }

  /** Validate and answer the lock-event update; an answer without news waits up to `waitMs` for some. */
  async lockEvents(namespace: string, request: unknown, options?: CallOptions): Promise<LockWatchUpdate> {
    this.checkOpen();
    const ns = validateNamespace(namespace);
    const { since, waitMs } = requestValidators["lock-events"].parse(request);
    const first = this.engine.lockEvents(ns, since);
    const update = first.update;
    if (waitMs === undefined || waitMs === 0 || update.type !== "events" || update.events.length > 0) return update;
    await awaitLockEvents(first.log, waitMs, options?.signal, this.polls, this.setTimer);
    this.checkOpen();
    return this.engine.lockEvents(ns, since).update;
  }

  /** `ok` with the leader id and version, until closed. */
  async health(_options?: CallOptions): Promise<HealthResponse> {
    this.checkOpen();
    return { status: "ok", leaderId: this.leaderId, version: this.version, serverId: this.serverId };
  }

  /** The checks a call makes before it changes anything: open, namespace, body. */
  private validated(namespace: string, parse: (body: unknown) => unknown, request: unknown): void {
    this.checkOpen();
    validateNamespace(namespace);
    parse(request);
  }

  protected checkOpen(): void {
    if (this.closing !== null) throw this.closedError;
  }

  private settle(pending: PendingLock, outcome: SettledOutcome): void {
    const callers = this.waiting.take(pending);
    if (serverChannels.lockGrant.hasSubscribers && !(outcome instanceof LeaseholdError) && outcome.status === "acquired") {
      const req = pending.request;
      serverChannels.lockGrant.publish(serverMessages.lockGrant(req.namespace.name, req.requestId, outcome, true));
    }
    if (callers === undefined) return;
    if (!(outcome instanceof LeaseholdError) && outcome.status === "acquired") this.activity.waited(this.clock() - pending.request.arrivedAt);
    answerCallers(callers, outcome);
  }
}
