import { requestValidators, type LeaseholdError, type LockResponse, type WaitForLocksResponse } from "@leasehold/protocol";
import type { Logger } from "pino";
import { DEFAULT_CLAIM_WINDOW_MS } from "../engine/promote-replica.js";
import type { PromoteSummary } from "../engine/replication-entries.js";
import { WAIT_TIMEOUT } from "../engine/timeout-answers.js";
import type { ServingGate } from "../engine/serving-gate.js";
import { InMemoryLockService } from "../service/in-memory-lock-service.js";
import type { WaitingLockHandle } from "../service/waiting-lock-handle.js";
import { coordinatorUnavailable, TAKING_OVER_RETRY_AFTER_MS, unavailable } from "./cluster-errors.js";
import type { Coordinator, HeldTerm, ImmutableRecord, LoadedBound } from "./coordinator.js";
import { HeldBackLines } from "./held-back-lines.js";
import type { HeldBackPlaces } from "./held-back-places.js";
import { realProcessClock, type ProcessClock } from "./process-clock.js";
import { RevealedAnswers, type RevealedAnswersOptions } from "./replication/revealed-answers.js";
import type { TermReplicator } from "./replication/term-replicator.js";
import { ShardReserver } from "./shard-reserver.js";


/** What a term is made with. */
export interface ShardTermOptions {
  readonly term: HeldTerm;
  readonly leaderId: string;
  readonly serverId: string;
  readonly coordinator: Coordinator;
  readonly logger: Logger;
  /** Monotonic clock (ms). */
  readonly clock: () => number;
  /**
   * Wall clock (ms since the epoch). The gate also closes by it: a paused VM's monotonic clock
   * does not advance while the guest is stopped, its wall clock is set forward on resume.
   */
  readonly wallClock: () => number;
  /**
   * Sets a timer on {@link clock}'s time (the gate, the lease-wait, the engine's deadlines, bound
   * retries). Default: Node's `setTimeout`, unref'd; the simulator passes its process's.
   */
  readonly setTimer?: ProcessClock["setTimer"] | undefined;
  /** When the gate first closes: `t_sent + leaderLease − margin` of the acquisition, on both clocks. */
  readonly gateUntil: GateDeadline;
  /** Monotonic time from which locks may be granted (the previous leaders' leases have run out). */
  readonly grantsFrom: number;
  /**
   * The lease-wait record this term waits out (`AcquiredTerm.lockDelayMs`). When it is above
   * {@link validForMs}, the record is lowered to this term's own once the wait is over.
   */
  readonly lockDelayMs: number;
  readonly leaseMs: number;
  /** The `validForMs` of every lease this term answers: the value its acquisition recorded. */
  readonly validForMs: number;
  readonly maxWaitingPerNamespace?: number | undefined;
  /** How long a lock watch lasts unless re-registered (see `LockServiceOptions.watchTtlMs`). */
  readonly watchTtlMs?: number | undefined;
  /** Size of a bound reservation block. */
  readonly reserveBlock: number;
  /** How long a client should wait before re-sending after this term ends. */
  readonly retryAfterMs: number;
  /** Called once when the term must end on its own (deposed: a fenced write matched nothing): the runtime ends it. */
  readonly onFailed: (term: ShardTerm, reason: string) => void;
  /**
   * Called once each time the gate closes by time (no renewal confirmed the row in time): the term
   * serves nothing but keeps its table, and its renewals go on; a renewal that matches reopens the
   * gate ({@link ShardTerm.extendGate}), one that matches nothing ends the term. Default: nothing.
   */
  readonly onGateClosed?: ((term: ShardTerm) => void) | undefined;
  /**
   * TEST ONLY (`LEASEHOLD_TEST_BREAK=end-on-gate-close`): a gate closed by time ends the term at
   * once, table and all (`onFailed` with "serving gate closed"), as before pnpm sim's seeds 73 and
   * 132. Default false.
   */
  readonly endOnGateClose?: boolean | undefined;
  readonly onBoundExtended: () => void;
  /**
   * The namespaces' images of a promoted replica (a standby taking the shard over with its state),
   * keyed by namespace: the table starts with them, every lease restarted at {@link carriedLeaseMs},
   * each carried waiter kept for the claim window; `leaderId` must be the replica's. Default: none,
   * the table starts empty.
   */
  readonly carried?: Readonly<Record<string, unknown>> | undefined;
  /**
   * How long the carried leases last from the promotion (`margins.ts` `carriedLeaseMs`: the
   * longest `validForMs` an earlier leader answered, plus the clock margin, when longer than
   * {@link leaseMs}). Default, and never less than, {@link leaseMs}.
   */
  readonly carriedLeaseMs?: number | undefined;
  /**
   * Bounds the statement that started this term already loaded under its epoch (an adoption of a
   * hand-over loads the carried namespaces' bounds in the same statement): those namespaces serve
   * at once, the others carried are loaded before the term serves. Default: none.
   */
  readonly loadedBounds?: readonly LoadedBound[] | undefined;
  /**
   * How long each carried waiter keeps its place for its re-sent `requestId` (see `carried`).
   * Default: the engine's (2,000 ms: a client re-sends at once after its 503, well within it). The
   * test break `drop-carried-waiters` sets 0, so a negative control shows the place is lost without it.
   */
  readonly claimWindowMs?: number | undefined;
  /**
   * The places of the requests an earlier leader still held back in its lease-wait when it handed
   * the table over (its hand-over entry carried them): each namespace's line starts with them, in
   * their order, each kept for {@link claimWindowMs} for its re-sent `requestId`. Default: none.
   */
  readonly heldBack?: HeldBackPlaces | undefined;
  /** TEST ONLY (`LEASEHOLD_TEST_BREAK=gate`): the gate never closes by time. Default false. */
  readonly gateless?: boolean | undefined;
  /** TEST ONLY (`retry-before-ack`, `unheld-before-attach`): see {@link RevealedAnswersOptions}. Default: the rule whole. */
  readonly revealed?: RevealedAnswersOptions | undefined;
}

/** What a table handed over held when its gate closed. */
export interface HandedOverTable {
  /** Live tokens (lock grants and immutable-timestamp locks): the locks carried. */
  readonly locks: number;
  /** Requests waiting: each keeps its place at the new leader for its re-sent `requestId`. */
  readonly waiters: number;
}

/**
 * When a serving gate closes, on each of two clocks: `t_sent + leaderLease − margin`, where
 * `t_sent` was read from that clock just before the renewal (or acquisition) was sent. The gate is
 * closed once *either* clock reaches its deadline.
 */
export interface GateDeadline {
  /** On the monotonic clock (`performance.now()`, ms). */
  readonly monotonic: number;
  /** On the wall clock (`Date.now()`, ms). */
  readonly wall: number;
}

/**
 * One term of one shard's leadership on this server: its own lock table (an
 * {@link InMemoryLockService} with the term's leader id, so tokens of any other term are void),
 * its serving gate, its bound reserver and the lock requests held back during the lease-wait.
 * A term never restarts: when it ends, its table is dropped, and a later acquisition is a new term.
 */
export class ShardTerm implements ServingGate {
  readonly service: InMemoryLockService;
  readonly reserver: ShardReserver;
  readonly shard: number;
  readonly epoch: number;
  readonly leaderId: string;
  /** This term's answers that reveal grants: each waits for the standby's acknowledgement (revealed-answers.ts). */
  readonly answers: RevealedAnswers;
  /** What the table carried from a promoted replica, `null` when it started empty. */
  readonly carried: PromoteSummary | null = null;
  /** True when the term ended to hand its table over: its replication stays open until the hand-over is done. */
  handingOver = false;
  /** What the table held when the term ended to hand it over (for the hand-over's log line), `null` otherwise. */
  handedOver: HandedOverTable | null = null;
  /** Monotonic times of the first and last operation served (for the serve-interval log). */
  firstServedAt = -1;
  lastServedAt = -1;
  private gateUntil: GateDeadline;
  private cancelGateTimer: (() => void) | null = null;
  private waitOver: boolean;
  /** True from the gate's closure by time until a renewal reopens it ({@link closedByTime}). */
  private gateClosed = false;
  private cancelWaitTimer: (() => void) | null = null;
  private readonly setTimer: ProcessClock["setTimer"];
  /**
   * Carried namespaces whose timestamp bound is still loading. Until none is, the engine's gate
   * stays shut (nothing is served, no waiter is granted or timed out): a grant hands out a
   * fencing number, which needs the namespace's bound, and a waiter granted from a timer (a lapse
   * or a timeout ahead of it) has nobody to answer a refusal to.
   */
  private loadingCarried = 0;
  /**
   * True while a balance hand-over waits for its taker's acknowledgement of the hand-over entry
   * and for the row to move ({@link pauseForHandOver}): the engine's gate is shut, as while
   * carried bounds load, so nothing is served, granted, timed out or lapsed meanwhile, and the
   * table stays exactly what the taker acknowledged; unlike {@link end}, it can reopen.
   */
  private paused = false;
  /** Held-back locks and waits, a first-in-first-out line per namespace. */
  private readonly lines: HeldBackLines;
  private readonly recorded = new Map<string, number>();
  /** The held-back places when the term ended to hand its table over ({@link heldBackPlaces}). */
  private handedOverPlaces: HeldBackPlaces | null = null;
  private ended: LeaseholdError | null = null;

  constructor(private readonly options: ShardTermOptions) {
    const { term, clock } = options;
    this.answers = new RevealedAnswers(options.revealed);
    this.setTimer = options.setTimer ?? realProcessClock.setTimer;
    this.shard = term.shard;
    this.epoch = term.epoch;
    this.leaderId = options.leaderId;
    this.gateUntil = options.gateUntil;
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
      mayStart: (namespace) => this.ended === null && this.waitOver && this.reserver.isPrepared(namespace),
      retryAfterMs: options.retryAfterMs,
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
   * The engine's gate: open while the term lives and its last renewal is recent enough on *both*
   * clocks. The monotonic clock alone misses a paused VM (CLOCK_MONOTONIC stops while the guest is
   * suspended, so on resume it reads as if no time passed while the other servers' clocks ran);
   * the wall clock alone misses a wall clock stepped back. Each covers the other's fault.
   */
  isOpen(now: number): boolean {
    if (this.ended !== null || this.loadingCarried > 0 || this.paused || (this.options.gateless !== true && this.pastDeadline(now))) return false;
    if (this.firstServedAt < 0) this.firstServedAt = now;
    this.lastServedAt = now;
    return true;
  }

  refusal(): LeaseholdError {
    if (this.ended !== null) return this.ended;
    if (this.loadingCarried > 0 && !this.pastDeadline(this.options.clock())) {
      return unavailable(`shard ${this.shard} was just taken over with its table; its timestamp bounds are loading, retry shortly`, TAKING_OVER_RETRY_AFTER_MS, { shard: this.shard });
    }
    if (this.paused && !this.pastDeadline(this.options.clock())) {
      return unavailable(`shard ${this.shard} is being handed over with its table; retry shortly`, TAKING_OVER_RETRY_AFTER_MS, { shard: this.shard });
    }
    // Closed by time before its timer fired (a pause): report it now, from outside this call.
    queueMicrotask(() => this.closeByTime());
    return unavailable(`this server's leadership of shard ${this.shard} could not be confirmed in time; retry shortly`, this.options.retryAfterMs, { shard: this.shard });
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
      this.service.restartClaimWindow();
      this.lines.restartClaimWindow(this.claimWindowMs);
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

  /**
   * A renewal sent at `t_sent` (on both clocks) succeeded: keep serving until `t_sent + lease −
   * margin`. The deadline is the latest-sent renewal's, on both clocks (an older renewal answering
   * late changes nothing; the wall deadline is never taken from a renewal other than the monotonic
   * one's, so a wall clock stepped back between two renewals cannot stretch it).
   */
  extendGate(until: GateDeadline): void {
    if (this.ended !== null || until.monotonic <= this.gateUntil.monotonic) return;
    this.gateUntil = until;
    if (this.gateClosed && !this.pastDeadline(this.options.clock())) {
      this.gateClosed = false;
      // The row was this term's all along (the renewal is fenced by the epoch): no one else led.
      this.options.logger.info({ shard: this.shard, epoch: this.epoch, leaderId: this.leaderId }, "serving gate reopened: a renewal confirmed the row; serving on with the table");
    }
    this.armGate();
  }

  /** True while the gate is closed by time, the table kept, until a renewal reopens it or one that matches nothing ends the term. */
  get closedByTime(): boolean {
    return this.gateClosed && this.ended === null;
  }

  /**
   * The gate's deadline passed: serve nothing, keep the table, and let the renewals decide (the
   * runtime keeps renewing every led term). TEST ONLY `endOnGateClose`: end at once instead.
   */
  private closeByTime(): void {
    if (this.ended !== null || this.gateClosed || !this.pastDeadline(this.options.clock())) return;
    if (this.options.endOnGateClose === true) return this.options.onFailed(this, "serving gate closed");
    this.gateClosed = true;
    this.options.onGateClosed?.(this);
    this.options.logger.info({ shard: this.shard, epoch: this.epoch, leaderId: this.leaderId }, "serving gate closed: no renewal confirmed the row in time; serving nothing, the table kept until a renewal tells");
  }

  /** True once either clock has reached the gate's deadline. */
  private pastDeadline(now: number): boolean {
    return now >= this.gateUntil.monotonic || this.options.wallClock() >= this.gateUntil.wall;
  }

  /** `beginLock` of this term: held back in FIFO order while the term may not grant yet. */
  beginLock(namespace: string, body: unknown): LockResponse | WaitingLockHandle {
    if (!this.lines.has(namespace) && !this.waiting && this.reserver.isPrepared(namespace)) {
      return this.answers.begun(() => this.service.beginLock(namespace, body));
    }
    return this.holdBack(namespace, requestValidators.lock.parse(body), (request) => this.answers.begun(() => this.service.beginLock(namespace, request)));
  }

  /**
   * `beginWaitForLocks` of this term: held back in the same FIFO line as locks while the term may
   * not grant yet, since locks an earlier leader granted may still be held: a wait must not pass them.
   */
  beginWaitForLocks(namespace: string, body: unknown): WaitForLocksResponse | WaitingLockHandle<WaitForLocksResponse> {
    if (!this.lines.has(namespace) && !this.waiting && this.reserver.isPrepared(namespace)) {
      return this.answers.begun(() => this.service.beginWaitForLocks(namespace, body));
    }
    const request = requestValidators["wait-for-locks"].parse(body);
    return this.holdBack(namespace, request, (r) => this.answers.begun(() => this.service.beginWaitForLocks(namespace, r)), WAIT_TIMEOUT);
  }

  private holdBack<A extends { readonly status: string }>(
    namespace: string,
    request: { readonly requestId?: string | undefined; readonly acquireTimeoutMs?: number | undefined },
    begin: (request: unknown) => A | WaitingLockHandle<A>,
    cancelledAs?: A,
  ): WaitingLockHandle<A> {
    if (this.ended !== null) throw this.ended;
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

  /** Reopen the gate a balance hand-over shut: the taker did not acknowledge, the row did not move. */
  resumeAfterHandOver(): void {
    this.paused = false;
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

  private armGate(): void {
    if (this.options.gateless === true) return;
    this.cancelGateTimer?.();
    // Node's timers run on the monotonic clock: after a pause this fires late, so isOpen checks
    // both clocks on every operation as well.
    const left = Math.min(this.gateUntil.monotonic - this.options.clock(), this.gateUntil.wall - this.options.wallClock());
    this.cancelGateTimer = this.setTimer(() => {
      if (this.pastDeadline(this.options.clock())) this.closeByTime();
      else this.armGate();
    }, Math.max(0, Math.ceil(left)) + 1);
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
