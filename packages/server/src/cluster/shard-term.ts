import { requestValidators, type LeaseholdError, type LockResponse, type WaitForLocksResponse } from "@leasehold/protocol";
import { DEFAULT_CLAIM_WINDOW_MS } from "../engine/promote-replica.js";
import type { PromoteSummary } from "../engine/replication-entries.js";
import { WAIT_TIMEOUT } from "../engine/timeout-answers.js";
import type { ServingGate } from "../engine/serving-gate.js";
import { InMemoryLockService } from "../service/in-memory-lock-service.js";
import type { WaitingLockHandle } from "../service/waiting-lock-handle.js";
import { coordinatorUnavailable } from "./cluster-errors.js";
import type { ImmutableRecord } from "./coordinator.js";
import { HeldBackLines } from "./held-back-lines.js";
import type { HeldBackPlaces } from "./held-back-places.js";
import { RevealedAnswers } from "./replication/revealed-answers.js";
import type { TermReplicator } from "./replication/term-replicator.js";
import type { ShardTermOptions } from "./shard-term-options.js";
import { ShardReserver } from "./shard-reserver.js";
import { TermGate } from "./term-gate.js";

/** What a table handed over held when its gate closed. */
export interface HandedOverTable {
  /** Live tokens (lock grants and immutable-timestamp locks): the locks carried. */
  readonly locks: number;
  /** Requests waiting: each keeps its place at the new leader for its re-sent `requestId`. */
  readonly waiters: number;
}

/**
 * One term of one shard's leadership on this server: its own lock table (an
 * {@link InMemoryLockService} with the term's leader id, so tokens of any other term are void),
 * its serving gate, its bound reserver and the lock requests held back during the lease-wait.
 * A term never restarts: when it ends, its table is dropped, and a later acquisition is a new term.
 */
export class ShardTerm extends TermGate implements ServingGate {
  readonly service: InMemoryLockService;
  readonly reserver: ShardReserver;
  /** This term's answers that reveal grants: each waits for the standby's acknowledgement (revealed-answers.ts). */
  readonly answers: RevealedAnswers;
  /** What the table carried from a promoted replica, `null` when it started empty. */
  readonly carried: PromoteSummary | null = null;
  /** True when the term ended to hand its table over: its replication stays open until the hand-over is done. */
  handingOver = false;
  /** What the table held when the term ended to hand it over (for the hand-over's log line), `null` otherwise. */
  handedOver: HandedOverTable | null = null;
  private waitOver: boolean;
  private cancelWaitTimer: (() => void) | null = null;
  /** Held-back locks and waits, a first-in-first-out line per namespace. */
  private readonly lines: HeldBackLines;
  private readonly recorded = new Map<string, number>();
  /** The held-back places when the term ended to hand its table over ({@link heldBackPlaces}). */
  private handedOverPlaces: HeldBackPlaces | null = null;
  /** The options as the term's own callbacks take them (the gate's base class sees no callback's term type). */
  protected declare readonly options: ShardTermOptions<ShardTerm>;

  constructor(options: ShardTermOptions<ShardTerm>) {
    super(options);
    const { term, clock } = options;
    this.answers = new RevealedAnswers(options.revealed);
    this.reserver = new ShardReserver(options.coordinator, term, options.reserveBlock, {
      onDeposed: (reason) => options.onFailed(this, reason),
      onExtended: options.onBoundExtended,
      onError: (namespace, err) => options.logger.warn({ shard: this.shard, epoch: this.epoch, namespace, err }, "bound extension failed; its outcome will be re-read"),
      // A carried namespace's counter is the replica's copy: resume above the bound just loaded.
      onLoaded: (namespace, floor) => this.service.raiseCounter(namespace, floor + 1),
    });
    this.lines = new HeldBackLines({
      clock,
      setTimer: this.setTimer,
      waiting: () => this.waiting,
      reserver: this.reserver,
      // Not while a balance hand-over has the gate shut: its entry carries the lines as they are,
      // and a line started now would only meet the shut gate's refusal.
      mayStart: (namespace) => this.ended === null && this.waitOver && this.reserver.isPrepared(namespace) && !this.linesFrozen,
      retryAfterMs: options.retryAfterMs,
      detachAtWaitEnd: options.detachAtWaitEnd,
    });
    this.service = new InMemoryLockService({
      leaderId: options.leaderId,
      serverId: options.serverId,
      leaseMs: options.leaseMs,
      validForMs: options.validForMs,
      ...(options.maxWaitingPerNamespace === undefined ? {} : { maxWaitingPerNamespace: options.maxWaitingPerNamespace }),
      ...(options.watchTtlMs === undefined ? {} : { watchTtlMs: options.watchTtlMs }),
      logger: options.logger,
      clock,
      setTimer: this.setTimer,
      timestampReserver: this.reserver,
      servingGate: this,
      replica: options.carried !== undefined,
    });
    if (options.carried !== undefined) {
      for (const [namespace, image] of Object.entries(options.carried)) this.service.restoreNamespace(namespace, image as never);
      this.carried = this.service.promote({
        ...(options.claimWindowMs === undefined ? {} : { claimWindowMs: options.claimWindowMs }),
        ...(options.carriedLeaseMs === undefined ? {} : { carriedLeaseMs: options.carriedLeaseMs }),
      });
      this.reserver.seed(options.loadedBounds ?? []);
      this.loadCarried(Object.keys(options.carried).filter((namespace) => !this.reserver.isPrepared(namespace)));
    }
    const wait = options.grantsFrom - clock();
    this.waitOver = wait <= 0;
    if (!this.waitOver) {
      this.cancelWaitTimer = this.setTimer(() => this.finishWait(), Math.ceil(wait) + 1);
    }
    if (options.heldBack !== undefined) this.lines.carry(options.heldBack, this.claimWindowMs);
    this.armGate();
  }

  /** Replication of this term's table to its standby, `null` before the leader side attached one. */
  get replicator(): TermReplicator | null {
    return this.answers.current;
  }

  /**
   * The leader side attached `replicator`: answers that reveal grants wait for it from now on,
   * including those of requests that began before (revealed-answers.ts). It stays for the term's
   * life: once its replication closed, an answer still pending is refused, never given unheld.
   */
  attachReplicator(replicator: TermReplicator): void {
    this.answers.attach(replicator);
  }

  /**
   * Load the carried namespaces' bounds before the term serves: all in one statement first
   * (`ShardReserver.prepareAll`), then each that failed on its own, retried until it loads or the
   * term ends.
   */
  private loadCarried(namespaces: readonly string[]): void {
    // Test mode (--log-level debug): when the gate of a taken-over table opened.
    const serving = (): void => this.options.logger.debug({ shard: this.shard, epoch: this.epoch }, "carried bounds loaded: serving");
    if (namespaces.length === 0) return serving();
    this.loadingCarried += namespaces.length;
    const done = (): void => {
      if (--this.loadingCarried > 0) return;
      // The gate opens now: re-sent waiters were refused until here, so their window starts here.
      this.restartClaimWindows();
      serving();
    };
    // The engine's deadline timer keeps firing while the gate is shut: it catches up once open.
    const retry = (namespace: string) => (err: unknown) => {
      if (this.ended !== null) return;
      this.options.logger.warn({ shard: this.shard, epoch: this.epoch, namespace, err }, "loading a carried namespace's timestamp bound failed; retrying");
      this.setTimer(() => void this.reserver.prepare(namespace).then(done, retry(namespace)), this.options.retryAfterMs);
    };
    this.reserver.prepareAll(namespaces).forEach((loading, i) => loading.then(done, retry(namespaces[i] as string)));
  }

  /** How long the lease-wait still holds lock grants back (ms; 0 once over): a standby's snapshot carries it. */
  leaseWaitLeftMs(): number {
    return this.waiting ? Math.max(0, this.options.grantsFrom - this.options.clock()) : 0;
  }

  /** How long a carried waiter or held-back place keeps its place for its re-sent `requestId`. */
  private get claimWindowMs(): number {
    return this.options.claimWindowMs ?? DEFAULT_CLAIM_WINDOW_MS;
  }

  /**
   * The places of the requests this term holds back (its lease-wait's first-in-first-out lines),
   * in order, as a hand-over carries them; once the term ended to hand its table over, those it
   * held then (its lines were answered 503 at once). Empty once ended otherwise.
   */
  heldBackPlaces(): HeldBackPlaces {
    if (this.ended !== null) return this.handedOverPlaces ?? {};
    return this.lines.places();
  }

  /** True while the lease-wait holds lock grants back. */
  get waiting(): boolean {
    if (!this.waitOver && this.options.clock() >= this.options.grantsFrom) this.finishWait();
    return !this.waitOver;
  }

  /** `beginLock` of this term: held back in FIFO order while the term may not grant yet. */
  beginLock(namespace: string, body: unknown): LockResponse | WaitingLockHandle {
    if (this.mayBeginAt(namespace)) {
      return this.answers.begun(() => this.service.beginLock(namespace, body));
    }
    return this.holdBack(namespace, requestValidators.lock.parse(body), (request) => this.answers.begun(() => this.service.beginLock(namespace, request)));
  }

  /**
   * `beginWaitForLocks` of this term: held back in the same FIFO line as locks while the term may
   * not grant yet, since locks an earlier leader granted may still be held: a wait must not pass them.
   */
  beginWaitForLocks(namespace: string, body: unknown): WaitForLocksResponse | WaitingLockHandle<WaitForLocksResponse> {
    if (this.mayBeginAt(namespace)) {
      return this.answers.begun(() => this.service.beginWaitForLocks(namespace, body));
    }
    const request = requestValidators["wait-for-locks"].parse(body);
    return this.holdBack(namespace, request, (r) => this.answers.begun(() => this.service.beginWaitForLocks(namespace, r)), WAIT_TIMEOUT);
  }

  /**
   * True when a request of `namespace` may go straight to the table: the lease-wait is over, no
   * line is held back, the bound is loaded. The wait is asked first: a request that arrives once
   * it is due but before its timer fired ends it here, starting the held-back lines, so it is
   * then behind them (TEST ONLY `detachAtWaitEnd`: the line is looked at first).
   */
  private mayBeginAt(namespace: string): boolean {
    if (this.options.detachAtWaitEnd === true) return !this.lines.has(namespace) && !this.waiting && this.reserver.isPrepared(namespace);
    return !this.waiting && !this.lines.has(namespace) && this.reserver.isPrepared(namespace);
  }

  private holdBack<A extends { readonly status: string }>(
    namespace: string,
    request: { readonly requestId?: string | undefined; readonly acquireTimeoutMs?: number | undefined },
    begin: (request: unknown) => A | WaitingLockHandle<A>,
    cancelledAs?: A,
  ): WaitingLockHandle<A> {
    if (this.ended !== null) throw this.ended;
    // A balance hand-over shut the gate and took the places it carries (its final entry): a place
    // taken now could not be among them, and the taker would not keep it. Refused, as the engine
    // refuses a request of a loaded namespace ("being handed over; retry shortly"); an abandoned
    // hand-over reopens the line.
    if (this.linesFrozen) throw this.refusal();
    return this.lines.hold(namespace, request, begin, cancelledAs);
  }

  /** Cancel held-back requests with this `requestId`; true when there were some. */
  cancelQueued(namespace: string, requestId: string): boolean {
    return this.lines.cancel(namespace, requestId);
  }

  /**
   * Run an operation whose answer may reveal a grant (transactions/start, timestamp leases, lock
   * events, inspection), its answer held until the standby acknowledged it (revealed-answers.ts).
   */
  held<A>(operation: () => Promise<A>): Promise<A> {
    return this.answers.answer(operation);
  }

  /** Load the namespace's bound if this term has not yet (timestamps need it before anything is served). */
  prepare(namespace: string): Promise<void> | null {
    if (this.reserver.isPrepared(namespace)) return null;
    return this.reserver.prepare(namespace).catch((err: unknown) => {
      throw coordinatorUnavailable(err, this.options.retryAfterMs);
    });
  }

  /** The immutable timestamp to answer: never above what an earlier leader recorded, while the lease-wait lasts. */
  capImmutable(namespace: string, value: number): number {
    return this.waiting ? Math.min(value, this.reserver.cap(namespace)) : value;
  }

  /** Immutable timestamps changed since last recorded, to record in this renewal round. */
  immutableRecords(): ImmutableRecord[] {
    const out: ImmutableRecord[] = [];
    if (this.ended !== null) return out;
    const term = { shard: this.shard, epoch: this.epoch };
    for (const namespace of this.reserver.namespaces()) {
      // Timestamp leases keep the same promise through the same record: the lowest of the two.
      const immutable = this.service.immutableFloor(namespace) ?? this.reserver.floor(namespace) + 1;
      const leased = this.service.leaseFloor(namespace);
      const floor = leased === undefined ? immutable : Math.min(immutable, leased);
      const value = this.capImmutable(namespace, floor);
      if (this.recorded.get(namespace) !== value) out.push({ namespace, term, immutable: value });
    }
    return out;
  }

  /** Note what was recorded, so it is not sent again until it changes. */
  markRecorded(records: readonly ImmutableRecord[], stored: readonly string[]): void {
    const ok = new Set(stored);
    for (const r of records) if (ok.has(r.namespace)) this.recorded.set(r.namespace, r.immutable);
  }

  /**
   * Shut the gate for a balance hand-over, reversibly: nothing is served until
   * {@link resumeAfterHandOver} or {@link end}. Renewals go on (the term is still led), so the
   * row stays this term's while the taker acknowledges. Answers what the table holds, for the
   * hand-over's log line.
   */
  pauseForHandOver(): HandedOverTable {
    this.paused = true;
    const { heldTokens, waitingRequests } = this.service.metrics();
    return { locks: heldTokens, waiters: waitingRequests };
  }

  /** True while a balance hand-over has the gate shut ({@link pauseForHandOver}). */
  get pausedForHandOver(): boolean {
    return this.paused && this.ended === null;
  }

  /**
   * Reopen the gate a balance hand-over shut: the taker did not acknowledge, the row did not move.
   * Re-sent requests were refused while it was shut, so the windows in which carried places wait
   * for them count from now, and the held-back lines that may start (their bounds loaded
   * meanwhile) start now, in order.
   */
  resumeAfterHandOver(): void {
    this.paused = false;
    if (this.ended !== null) return;
    this.restartClaimWindows();
    this.lines.drainAll();
  }

  /**
   * True while a balance hand-over has the gate shut: the held-back lines take no new place and
   * none starts, so they stay what the hand-over's entry carries (TEST ONLY
   * `holdWhileHandingOver`: never).
   */
  private get linesFrozen(): boolean {
    return this.pausedForHandOver && this.options.holdWhileHandingOver !== true;
  }

  /** Count the claim windows of carried waiters and held-back places from now: the gate opens now, re-sends were refused until here. */
  private restartClaimWindows(): void {
    this.service.restartClaimWindow();
    this.lines.restartClaimWindow(this.claimWindowMs);
  }

  /** True once {@link end} ran. */
  get isEnded(): boolean {
    return this.ended !== null;
  }

  /**
   * Stop serving at once: waiting and held-back requests are answered with `error` (a 503 the
   * client re-sends elsewhere), the table is dropped and its tokens are void. Idempotent. With
   * `handingOver`, the replication stream stays open (grant answers held for it still wait for
   * their acknowledgement) until {@link finishHandOver}.
   */
  end(error: LeaseholdError, handingOver = false): void {
    if (this.ended !== null) return;
    this.ended = error;
    this.handingOver = handingOver;
    if (handingOver) {
      const { heldTokens, waitingRequests } = this.service.metrics();
      this.handedOver = { locks: heldTokens, waiters: waitingRequests };
      this.handedOverPlaces = this.lines.places();
    }
    this.cancelGateTimer?.();
    this.cancelWaitTimer?.();
    this.reserver.end();
    // Feeding stops before the table closes: its waiters stay in the standby's copy for a hand-over.
    this.replicator?.stop();
    if (!handingOver) this.replicator?.replication.close(error);
    void this.service.closeWith(error);
    this.lines.failAll(error);
  }

  /**
   * The hand-over is done or abandoned: close the replication stream (answers still held get
   * `error`), and the term is no longer handing over, so the leader side lets go of its stream.
   */
  finishHandOver(error: LeaseholdError): void {
    this.handingOver = false;
    this.replicator?.replication.close(error);
  }

  /**
   * The gate's deadline passed: serve nothing, keep the table, and let the renewals decide (the
   * runtime keeps renewing every led term). TEST ONLY `endOnGateClose`: end at once instead.
   */
  protected override closeByTime(): void {
    if (this.ended !== null || this.gateClosed || !this.pastDeadline(this.options.clock())) return;
    if (this.options.endOnGateClose === true) return this.options.onFailed(this, "serving gate closed");
    this.gateClosed = true;
    this.options.onGateClosed?.(this);
    this.options.logger.info({ shard: this.shard, epoch: this.epoch, leaderId: this.leaderId }, "serving gate closed: no renewal confirmed the row in time; serving nothing, the table kept until a renewal tells");
  }

  private finishWait(): void {
    if (this.waitOver) return;
    this.waitOver = true;
    this.cancelWaitTimer?.();
    this.lines.drainAll();
    this.settleLeaseWait();
  }

  /**
   * Every lease an earlier leader could have given has run out: lower the shard's record to this
   * term's own `validForMs`, so the next leader waits only for what this term answered. A failure
   * leaves the record higher, which is safe (a longer wait), and is only logged.
   */
  private settleLeaseWait(): void {
    const { lockDelayMs, validForMs, coordinator, logger } = this.options;
    if (this.ended !== null || lockDelayMs <= validForMs) return;
    const term = { shard: this.shard, epoch: this.epoch };
    coordinator.settleLeaseWait(term, validForMs).then(
      (matched) => logger.info({ ...term, validForMs, lockDelayMs, matched }, "lease-wait record lowered to this term's validForMs"),
      (err: unknown) => logger.warn({ ...term, err }, "could not lower the lease-wait record; the next leader waits the longer record"),
    );
  }
}
