import {
  LeaseholdError,
  type ImmutableTimestampResponse, type Lease, type LockRequest, type LockSpec, type LockTimeoutResponse, type LockWatchSince, type LockWatchUpdate,
  type RefreshRequest, type RefreshResponse, type StartTransactionsRequest, type StartTransactionsResponse, type TimestampLeaseMinResponse,
  type TimestampLeaseRequest, type TimestampLeaseResponse, type TimestampsRequest, type TimestampsResponse, type UnlockRequest, type UnlockResponse,
  type WaitForLocksRequest, type WaitForLocksResponse,
} from "@leasehold/protocol";
import { createMemoryTimestampReserver, type TimestampReserver } from "./timestamp-reserver.js";
import { HELD, LockRequestState, WAITING } from "./lock-request-state.js";
import { tooManyWaiting } from "./too-many-waiting.js";
import { LockTable, type SettledOutcome } from "./lock-table.js";
import { allGrantableNow, forgetIdle } from "./spec-descriptors.js";
import { holdImmutable } from "./token-holds.js";
import { beginWait, holdTimestampLease } from "./wait-and-lease-ops.js";
import { LockWatchLog } from "./lock-watch-log.js";
import { NamespaceState } from "./namespace-state.js";
import { PendingLock } from "./pending-lock.js";
import type { ServingGate } from "./serving-gate.js";
import { sortedSpecs } from "./request-identity.js";
import type { LeaseLapse } from "./lease-lapse.js";
import { reapDue, type ReapHooks, type ReapTally } from "./reap-due.js";
import { createRandomTokenSource } from "./token-source.js";
import { waiterEntry } from "./replication-emit.js";
import { REPLICA_GATE, dropUnclaimed, type ClaimWindow } from "./promote-replica.js";
import { TIMEOUT } from "./timeout-answers.js";
import { effectiveValidForMs, type LockAttempt, type LockEngineOptions } from "./lock-engine-options.js";

const noop = (): void => undefined;
// Node defines the global `performance` as a lazy getter; reading it once keeps that getter off
// every operation.
const perf = globalThis.performance;
const monotonicNow = (): number => perf.now();

/**
 * The serving half of `LockEngine` (lock-engine.ts): the table's state, the operations clients
 * call on every request (lock, unlock, refresh, timestamps, transactions, watches), and the
 * catch-up each one starts with. Abstract: only `LockEngine`, which adds close, metrics,
 * inspection, revoke and the replication side, is built; the state it needs is `protected`.
 * One class, not a collaborator, so the hot paths read their fields with no extra hop.
 */
export abstract class LockEngineCore {
  /** The leader id in every lease. */
  readonly leaderId: string;
  /** Lease duration in milliseconds. */
  readonly leaseMs: number;
  /** The lease answered with every grant and refresh (immutable, so one object serves all). */
  readonly lease: Lease;
  /** Lapsed leases handled by reaping since start, plus one per pass: a diagnostic that reaping stays proportional. */
  get reapVisits(): number {
    return this.tally.visits;
  }

  protected readonly clock: () => number;
  protected readonly reserver: TimestampReserver;
  protected readonly onSettled: (pending: PendingLock, outcome: SettledOutcome) => void;
  private readonly onLeaseLapse: (namespace: string, descriptorCount: number, lapse: LeaseLapse) => void;
  protected readonly namespaces = new Map<string, NamespaceState>();
  protected readonly table: LockTable;
  private lastNamespace: NamespaceState | null = null;
  protected closed = false;
  protected readonly tally: ReapTally = { visits: 0, lapses: 0, timeouts: 0 };
  private readonly reapHooks: ReapHooks;
  protected unlocksTotal = 0;
  protected abandonedTotal = 0;
  protected revokedTotal = 0;
  /** Serial of the latest request that had to wait (the watchers view's cursor). */
  protected waitSerial = 0;
  private readonly maxWaitingPerNamespace: number;
  /** The gate asked now: {@link REPLICA_GATE} while a replica, then the configured one. */
  protected gate: ServingGate | null;
  protected readonly servingGate: ServingGate | null;
  /** Waiters a promotion carried, until their claim window ends; null otherwise. */
  protected claims: ClaimWindow | null = null;
  /** The id of the lock-event logs this table starts: the leader id, made new by a promotion (logs carried from a replica keep theirs). */
  protected logId: string;

  constructor(options: LockEngineOptions = {}) {
    const leaseMs = options.leaseMs ?? 10_000;
    const validForMs = effectiveValidForMs(leaseMs, options.validForMs);
    if (!(leaseMs > 0) || !Number.isFinite(leaseMs)) throw new RangeError(`leaseMs must be a positive number (got ${leaseMs})`);
    if (!Number.isSafeInteger(validForMs) || validForMs < 0 || validForMs >= leaseMs) {
      throw new RangeError(`validForMs must be an integer in [0, leaseMs) (got ${validForMs}, leaseMs ${leaseMs})`);
    }
    const maxWaiting = options.maxWaitingPerNamespace ?? 100_000;
    if (!Number.isSafeInteger(maxWaiting) || maxWaiting < 1) {
      throw new RangeError(`maxWaitingPerNamespace must be a positive integer (got ${maxWaiting})`);
    }
    this.maxWaitingPerNamespace = maxWaiting;
    this.leaseMs = leaseMs;
    this.leaderId = options.leaderId ?? globalThis.crypto.randomUUID();
    this.lease = Object.freeze({ leaderId: this.leaderId, validForMs });
    this.clock = options.clock ?? monotonicNow;
    this.reserver = options.reserver ?? createMemoryTimestampReserver();
    this.onSettled = options.onSettled ?? noop;
    this.onLeaseLapse = options.onLeaseLapse ?? noop;
    this.servingGate = options.gate ?? null;
    this.gate = options.replica === true ? REPLICA_GATE : this.servingGate;
    this.logId = this.leaderId;
    this.table = new LockTable(options.tokenSource ?? createRandomTokenSource(), this.lease, leaseMs, this.onSettled);
    this.table.sink = options.replicationSink ?? null;
    this.reapHooks = { onSettled: this.onSettled, onLeaseLapse: this.onLeaseLapse, timeout: TIMEOUT };
  }

  /**
   * Acquire locks. Answers `acquired` or `timeout` at once when it can, otherwise a
   * {@link PendingLock} whose outcome arrives through `onSettled`. Throws `REQUEST_ID_CONFLICT`
   * when `requestId` names a live request with a different identity.
   */
  lock(namespace: string, request: LockRequest): LockAttempt {
    const now = this.catchUp();
    const ns = this.namespace(namespace);
    const locks = request.locks;
    const specs = locks.length === 1 ? locks : sortedSpecs(locks);
    const allOrNone = request.behavior !== "as-many-as-possible";
    const max = allOrNone ? specs.length : Math.min(request.max ?? specs.length, specs.length);
    const timeoutMs = request.acquireTimeoutMs ?? 0;
    const requestId = request.requestId;
    if (requestId !== undefined) {
      const existing = ns.requests.get(requestId);
      if (existing !== undefined) {
        const again = this.table.retry(existing, specs, allOrNone, max, now + timeoutMs);
        this.claims?.unclaimed.delete(existing);
        return again;
      }
    }
    // Checked before anything is created or queued, so a refused request leaves no trace. Only a
    // request that might wait is refused; one the table can grant whole right now always passes.
    if (timeoutMs > 0 && ns.waiting.size >= this.maxWaitingPerNamespace && !allGrantableNow(ns, specs)) {
      throw tooManyWaiting(namespace, ns.waiting.size, this.maxWaitingPerNamespace);
    }
    ns.ensureHeadroom(max);
    const createdForLimits = this.table.applyLimits(ns, specs);
    if (allOrNone && timeoutMs === 0 && !allGrantableNow(ns, specs)) return this.timeoutAtOnce(ns, specs);
    const req = new LockRequestState(ns, specs, requestId, allOrNone, max);
    req.clientDescription = request.clientDescription;
    req.arrivedAt = Math.floor(now);
    if (allOrNone ? this.table.advanceAllOrNone(req) : this.table.takeAvailable(req)) {
      if (createdForLimits) forgetIdle(ns, specs);
      if (requestId !== undefined) ns.requests.set(requestId, req);
      return this.table.grant(req);
    }
    if (timeoutMs === 0) return this.timeoutAtOnce(ns, specs);
    if (!allOrNone) this.table.watch(req);
    else if (createdForLimits) forgetIdle(ns, specs);
    const pending = req.waiter();
    pending.deadline = Math.ceil(now + timeoutMs);
    pending.waitSerial = ++this.waitSerial;
    this.table.deadlines.push(pending);
    ns.waiting.add(req);
    if (requestId !== undefined) ns.requests.set(requestId, req);
    if (this.table.sink !== null) this.table.sink(namespace, waiterEntry(req, now));
    return pending;
  }

  /**
   * Wait, acquiring nothing, until each descriptor in turn could have been granted in its mode
   * (`wait-for-locks`): queued FIFO as an all-or-none lock request, passing where it would be
   * granted. `free`/`timeout` at once when it can, else a {@link PendingLock} settled through
   * `onSettled`. A live `requestId` of a wait joins it (`REQUEST_ID_CONFLICT` for anything else).
   */
  waitForLocks(namespace: string, request: WaitForLocksRequest): WaitForLocksResponse | PendingLock {
    const now = this.catchUp();
    const limits = { maxWaitingPerNamespace: this.maxWaitingPerNamespace, tally: this.tally, nextSerial: () => ++this.waitSerial };
    const answer = beginWait(this.table, this.namespace(namespace), request, now, limits);
    if (this.claims !== null && answer instanceof PendingLock) this.claims.unclaimed.delete(answer.request);
    return answer;
  }

  /** Hold a fresh timestamp under `request.name` (`timestamp-leases`); a live `requestId` of it answers it again, renewed. */
  acquireTimestampLease(namespace: string, request: TimestampLeaseRequest): TimestampLeaseResponse {
    const now = this.catchUp();
    return holdTimestampLease(this.table, this.namespace(namespace), request, now, this.leaseMs, this.lease);
  }

  /** The smallest timestamp held under the lease name, or a fresh timestamp when none is. */
  minLeasedTimestamp(namespace: string, name: string): TimestampLeaseMinResponse {
    this.catchUp();
    const ns = this.namespace(namespace);
    return { minLeased: ns.minLeased(name) ?? this.takeCounted(ns, 1) };
  }

  /** Release tokens; answers those that were held, in request order, each once. */
  unlock(namespace: string, request: UnlockRequest): UnlockResponse {
    this.catchUp();
    const ns = this.namespaces.get(namespace);
    const unlocked: string[] = [];
    if (ns === undefined) return { unlocked };
    for (const token of request.tokens) {
      const req = ns.tokens.get(token);
      if (req === undefined) continue;
      this.table.releaseToken(req, "unlock");
      this.unlocksTotal++;
      unlocked.push(token);
    }
    return { unlocked };
  }

  /** Renew the leases of tokens still held; a lapsed or unknown token is ignored, never revived. */
  refresh(namespace: string, request: RefreshRequest): RefreshResponse {
    const now = this.catchUp();
    const ns = this.namespaces.get(namespace);
    const refreshed: string[] = [];
    if (ns !== undefined) {
      const seen = request.tokens.length > 1 ? new Set<string>() : null;
      for (const token of request.tokens) {
        const req = ns.tokens.get(token);
        if (req === undefined || seen?.has(token) === true) continue;
        seen?.add(token);
        this.table.leases.renew(req, now + this.leaseMs);
        refreshed.push(token);
      }
    }
    return { refreshed, lease: this.lease };
  }

  /** A range of fresh timestamps `[start, start + count)`. */
  timestamps(namespace: string, request: TimestampsRequest): TimestampsResponse {
    this.catchUp();
    return { start: this.takeCounted(this.namespace(namespace), request.count), count: request.count };
  }

  /** Start `count` transactions, each with a token holding an immutable-timestamp lock. */
  startTransactions(namespace: string, request: StartTransactionsRequest): StartTransactionsResponse {
    const now = this.catchUp();
    const ns = this.namespace(namespace);
    const first = ns.take(request.count);
    const transactions = holdImmutable(this.table, ns, first, request.count, now);
    const answer: StartTransactionsResponse = { immutableTimestamp: ns.minImmutable() ?? first, transactions, lease: this.lease };
    // In the same synchronous step as the start timestamps: the update holds every event before them.
    if (request.lockWatch !== undefined) answer.lockWatch = this.watchLog(ns).update(request.lockWatch.since, ns.tokens, now);
    return answer;
  }

  /** Watch `prefixes` in a namespace until `ttlMs` from now (PROTOCOL.md "Lock watches"); answers every prefix watched. */
  registerLockWatches(namespace: string, prefixes: readonly string[], ttlMs: number): string[] {
    const now = this.catchUp();
    const ns = this.namespace(namespace);
    const log = this.watchLog(ns);
    const watched = log.register(prefixes, now, ttlMs);
    // A standby carries the registration and the log's place, so a promoted table continues the log.
    if (this.table.sink !== null) this.table.sink(ns.name, { type: "watch", logId: log.logId, version: log.version, prefixes: [...prefixes], ttlMs });
    return watched;
  }

  /**
   * The lock-event update for a follower at `since` and the log it comes from (a long poll waits on
   * its `onChange`). The namespace's log is created empty when it has none.
   */
  lockEvents(namespace: string, since: LockWatchSince | null): { update: LockWatchUpdate; log: LockWatchLog; now: number } {
    const now = this.catchUp();
    const ns = this.namespace(namespace);
    const log = this.watchLog(ns);
    return { update: log.update(since, ns.tokens, now), log, now };
  }

  /** The smallest start timestamp held by an immutable-timestamp lock, or a fresh timestamp. */
  immutableTimestamp(namespace: string): ImmutableTimestampResponse {
    this.catchUp();
    const ns = this.namespace(namespace);
    return { immutableTimestamp: ns.minImmutable() ?? this.takeCounted(ns, 1) };
  }

  /**
   * Abandon a waiting request (its caller is gone): it leaves every queue and watch list, what it
   * acquired is released and waiters behind it are granted. `onSettled` is not called. Returns
   * false when the request was no longer waiting.
   */
  abandon(pending: PendingLock): boolean {
    const req = pending.request;
    if (req.status !== WAITING || this.closed) return false;
    // Behind a closed gate the table is frozen (and about to be dropped): releasing now could grant.
    if (this.gate !== null && !this.gate.isOpen(this.clock())) return false;
    this.catchUp();
    if (req.status !== WAITING) return false;
    this.abandonedTotal++;
    this.table.endWaiting(req, "abandon");
    return true;
  }

  /**
   * The live lock request with `requestId` in the namespace: its {@link PendingLock} while it
   * waits, its token once granted, `undefined` when no such request waits or is held. It looks
   * only (nothing is created, not even the namespace), so `lock-cancel` of an unknown id is free.
   */
  liveRequest(namespace: string, requestId: string): PendingLock | string | undefined {
    this.catchUp();
    const req = this.namespaces.get(namespace)?.requests.get(requestId);
    if (req === undefined) return undefined;
    if (req.status === HELD) return req.token;
    if (req.status === WAITING && req.pending !== null) return req.pending;
    return undefined;
  }

  /** When the engine next needs {@link advance}: the earliest lease expiry or waiter deadline. */
  nextDeadline(): number {
    if (this.gate === REPLICA_GATE) return Infinity;
    return Math.min(this.table.leases.nextExpiry(), this.table.deadlines.nextDeadline(), this.claims?.until ?? Infinity);
  }

  /** Let time pass: reap lapsed leases, then time out waiters whose deadline has come. */
  advance(): void {
    if (this.closed) return;
    // A closed gate freezes the table: no lapse may hand a lock to a waiter it no longer leads for.
    if (this.gate !== null && !this.gate.isOpen(this.clock())) return;
    this.catchUp();
  }

  protected catchUp(): number {
    if (this.closed) throw new LeaseholdError("UNAVAILABLE", "the lock server is shutting down");
    const now = this.clock();
    if (this.gate !== null && !this.gate.isOpen(now)) throw this.gate.refusal();
    this.table.now = now;
    if (this.claims !== null && this.claims.until <= now) this.endClaimWindow(now);
    this.table.repumpStalled();
    const head = this.table.leases.head;
    if ((head !== null && head.expiresAt <= now) || this.table.deadlines.nextDeadline() <= now) reapDue(this.table, now, this.tally, this.reapHooks);
    return now;
  }

  /** Take numbers outside a grant, telling the sink so a replica's counter follows. */
  private takeCounted(ns: NamespaceState, count: number): number {
    const first = ns.take(count);
    if (this.table.sink !== null) this.table.sink(ns.name, { type: "counter", next: ns.nextValue });
    return first;
  }

  /** The claim window ended: let time reach its end, drop what is unclaimed, then go on to `now`. */
  private endClaimWindow(now: number): void {
    const claims = this.claims as ClaimWindow;
    this.claims = null;
    this.table.now = claims.until;
    reapDue(this.table, claims.until, this.tally, this.reapHooks);
    this.abandonedTotal += dropUnclaimed(this.table, claims);
    this.table.now = now;
  }

  protected namespace(name: string): NamespaceState {
    const last = this.lastNamespace;
    if (last !== null && last.name === name) return last;
    let ns = this.namespaces.get(name);
    if (ns === undefined) {
      ns = new NamespaceState(name, this.reserver);
      this.namespaces.set(name, ns);
    }
    return (this.lastNamespace = ns);
  }

  private watchLog(ns: NamespaceState): LockWatchLog {
    return (ns.watchLog ??= new LockWatchLog(this.logId));
  }

  private timeoutAtOnce(ns: NamespaceState, specs: readonly LockSpec[]): LockTimeoutResponse {
    forgetIdle(ns, specs);
    this.tally.timeouts++;
    return TIMEOUT;
  }
}
