import { AdoptAfterAck } from "./replication/adopt-after-ack.js";
import { adoptBeforeStop } from "./replication/adopt-before-stop.js";
import { unavailable } from "./cluster-errors.js";
import type { LossReason } from "./cluster-metrics.js";
import type { ClusterRuntimeOptions } from "./cluster-runtime-options.js";
import { AnsweringMembers } from "./answering-members.js";
import type { LiveMember, ShardLease } from "./coordinator.js";
import { HealthProber } from "./health-prober.js";
import { joinWithRetry, type JoinRetry } from "./join-retry.js";
import { LeaseRenewer } from "./lease-renewer.js";
import { namesSyncedStandby, nextPassDelay, observeRows, planShards, type Seen } from "./plan-shards.js";
import { gateMargin } from "./margins.js";
import { MemberIdentityWatch } from "./member-identity.js";
import type { PromotionCandidate, ReplicaPromoter } from "./replication/promote-replica.js";
import type { HandOverDone } from "./replication/hand-over.js";
import { ShardMover } from "./replication/shard-mover.js";
import { logServeInterval } from "./serve-interval.js";
import { TermStarter } from "./term-starter.js";
import { recordBesideDecide, recordImmutables } from "./record-immutables.js";
import { ShardTerm } from "./shard-term.js";
import { realProcessClock, type ProcessClock } from "./process-clock.js";

export type { ClusterRuntimeOptions } from "./cluster-runtime-options.js";

/** Acquisitions in flight at once (of a statement pool of 4, leaving room for reads and bound loads). */
const ACQUIRE_LANES = 3;

/**
 * The leadership loop of one server (DESIGN.md "Cluster mode"): every third of the leader lease,
 * on a timer of its own ({@link LeaseRenewer}), it renews all its shards in one statement and
 * heartbeats; and every third of the leader lease a pass reads the lease rows, records immutable
 * timestamps, then takes shards that are free (released at once; expired only after their row was
 * seen unchanged for a whole leader lease) and gives up surplus ones, one at a time. A released
 * shard's `NOTIFY` runs a pass at once. No pass ever delays a renewal.
 *
 * Before all that it joins: it creates the tables if needed and checks the shard count
 * ({@link ClusterRuntime.join}). An unreachable database does not stop the server: it listens,
 * answers 503 and retries with backoff until the database comes; only an error that waiting cannot
 * fix ends it ({@link ClusterRuntime.onFatal}).
 */
export class ClusterRuntime {
  /** This server's term per shard, `null` where it leads nothing (empty until joined). */
  terms: (ShardTerm | null)[] = [];
  /**
   * Per shard, the term last given up with its hand-over still running (gate closed, row not yet
   * moved): its row still names this process at the term's epoch, and a pass must not take it for
   * an orphan and release it under the hand-over (which then matches nothing: the table is lost).
   */
  private readonly handing: (ShardTerm | null)[] = [];
  /** Lease rows as last read (for routing answers and `GET /v1/cluster`). */
  leases: ShardLease[] = [];
  /** Monotonic time the last successful read of {@link leases} was sent; see {@link leasesFresh}. */
  private leasesReadAt = -Infinity;
  /** The cluster's shard count, `null` until this server has joined (reached PostgreSQL once). */
  shards: number | null = null;
  private seen: (Seen | null)[] = [];
  /** When the last pass's read of the rows was sent, if that read failed; `null` when it answered (see `nextPassDelay`). */
  private failedReadSentAt: number | null = null;
  private members: LiveMember[];
  private readonly clock: () => number;
  /** When leadership began, `null` before. */
  private startedAt: number | null = null;
  /** This process's server id and incarnation, and whether the member row is its own. */
  readonly identity: MemberIdentityWatch;
  private listening = false;
  private joining: JoinRetry | null = null;
  private readonly renewer: LeaseRenewer;
  /** Acquires shards and starts their terms (empty, or with a promoted replica). */
  private readonly starter: TermStarter;
  /** Gives shards up on purpose (stop, balance): handed over with their tables where it can. */
  private readonly mover: ShardMover;
  /** Which listed members answer: only they count in the shares and take shards by balance. */
  private readonly answering: AnsweringMembers;
  private readonly prober: HealthProber;
  private readonly wallClock: () => number;
  private readonly margin: number;
  private cancelTimer: (() => void) | null = null;
  /** The process's clocks and timers (ClusterRuntimeOptions.time). */
  private readonly time: ProcessClock;
  private running: Promise<void> | null = null;
  private again = false;
  private stopping = false;
  /**
   * When the heartbeat that answered {@link members} was sent, and when this server last took a
   * shard (acquired, took over or adopted a hand-over): balance waits for a member list heard
   * since, so a server that took shards on an old list (a hand-over from a leaving member, or a
   * standby resumed from SIGSTOP taking its shard over) never gives one away by it.
   */
  private membersSentAt = -Infinity;
  private tookAt = -Infinity;
  private lastWarnAt = -Infinity;
  /** Why the last pass or join attempt could not reach PostgreSQL, or `null`. */
  coordinatorDown: string | null = null;
  /** Hears every term that ended (the service folds its counters into its totals). */
  onTermEnded: (term: ShardTerm) => void = () => undefined;
  /** Hears every term that started, in the turn it did, before it answers anything (the leader side resumes its replication). */
  onTermStarted: (term: ShardTerm) => void = () => undefined;
  /** Takes over shards with this member's replicas (`--replicas 1`), `null`: every term starts empty. */
  promoter: ReplicaPromoter | null = null;
  /** True while a stop adopts the rows handed over to this member first (see {@link stop}). */
  private adoptingBeforeStop = false;
  /** Adopts a row handed over to this member on its own once it acknowledged the hand-over entry (see {@link handOverAcknowledged}). */
  private readonly afterAck: AdoptAfterAck;
  /** The URL other servers and clients reach this one at; set once the server listens. */
  url: string;

  constructor(private readonly options: ClusterRuntimeOptions) {
    this.members = [{ serverId: options.serverId, ready: false }];
    this.identity = new MemberIdentityWatch(options.serverId, options.logger);
    this.url = options.url;
    const time = options.time ?? realProcessClock;
    this.time = time;
    this.clock = options.clock ?? (() => time.now());
    this.wallClock = options.wallClock ?? (() => time.wall());
    // The gate closes this long before a taker could act: it absorbs clock-rate differences (10% of
    // the lease) and the time between reading the clock and sending the renewal.
    this.margin = gateMargin(options.leaderLeaseMs);
    this.renewer = new LeaseRenewer({
      coordinator: options.coordinator,
      serverId: options.serverId,
      leaderLeaseMs: options.leaderLeaseMs,
      margin: this.margin,
      clock: this.clock,
      wallClock: this.wallClock,
      setTimer: (fn, ms) => time.setTimer(fn, ms),
      held: () => this.terms.filter((t): t is ShardTerm => t !== null),
      handingOver: () => this.handing.filter((t): t is ShardTerm => t !== null && t !== undefined),
      unsafeStopRenewingHandingOver: options.breaks?.has("stop-renewing-handing-over") === true,
      member: () => ({ serverId: options.serverId, incarnation: this.identity.incarnation, url: this.url, ready: this.ready }),
      onUnmatched: (term) => {
        // TEST ONLY (move-row-before-gate): such a term serves on until its gate closes.
        if (!this.mover.servesUntilGate(term)) this.lose(term, "renewal", "the renewal matched nothing: another server may lead it");
      },
      onMembers: (members, sentAt) => this.heardMembers(members, sentAt),
      onError: (err, msg) => this.warn(err, msg),
    });
    this.starter = new TermStarter({
      options,
      clock: this.clock,
      setTimer: (fn, ms) => time.setTimer(fn, ms),
      wallClock: this.wallClock,
      margin: this.margin,
      incarnation: this.identity.incarnation,
      url: () => this.url,
      retryAfterMs: () => this.retryAfterMs,
      stopping: () => this.stopping,
      promoter: () => this.promoter,
      led: (shard) => this.terms[shard] ?? null,
      onFailed: (term, reason) => this.failTerm(term, reason),
      // TEST ONLY (move-row-before-gate): a term whose row moved while it served ends when its gate closes.
      onGateClosed: (term) => {
        if (this.mover.servesUntilGate(term)) this.failTerm(term, "serving gate closed");
      },
      onStarted: (term, row) => {
        this.tookAt = this.clock();
        this.terms[term.shard] = term;
        this.leases[term.shard] = row;
        this.onTermStarted(term);
      },
      renewSoon: () => this.renewer.renewSoon(),
      reread: () => void this.pass(),
      warn: (err, msg) => this.warn(err, msg),
    });
    // A probe longer than a third of the leader lease would be late for the next one anyway.
    this.prober = new HealthProber({ timeoutMs: Math.max(100, Math.min(1_000, Math.floor(options.leaderLeaseMs / 3))) });
    this.answering = new AnsweringMembers({
      serverId: options.serverId,
      probe: options.probe ?? ((serverId, url) => this.prober.probe(serverId, url)),
      freshMs: options.leaderLeaseMs,
      clock: this.clock,
    });
    this.afterAck = new AdoptAfterAck({
      now: this.clock,
      setTimer: (fn, ms) => time.setTimer(fn, ms),
      awaits: (shard) => !this.stopping && this.awaitsHandOver(shard),
      busy: (shard) => this.promoter?.busy(shard) === true,
      adopt: (shard) => this.adoptNotified(shard),
      intervalMs: Math.max(50, Math.floor(options.leaderLeaseMs / 5)),
      forMs: options.leaderLeaseMs,
    });
    this.mover = new ShardMover({
      options,
      incarnation: this.identity.incarnation,
      led: (shard) => this.terms[shard] ?? null,
      terms: () => this.terms.filter((t): t is ShardTerm => t !== null),
      leases: () => this.leases,
      members: () => this.members,
      answering: (member) => this.answering.answering(member, this.leases),
      lose: (term, kind, reason, handingOver) => this.lose(term, kind, reason, handingOver),
      handedOver: (term, done) => this.noteHandedOver(term, done),
      stopping: () => this.stopping,
      warn: (err, msg) => this.warn(err, msg),
      promoter: () => this.promoter,
    });
  }

  /** Shards led now. */
  get shardsLed(): number {
    let n = 0;
    for (const t of this.terms) if (t !== null) n++;
    return n;
  }

  /**
   * True while the lease rows were read less than a leader lease ago (counted from when the read
   * was sent). An older view may name a leader that was deposed meanwhile: `GET /v1/cluster` then
   * names none (PROTOCOL.md "Cluster mode"), so a client never routes, or retires a term, by it.
   */
  get leasesFresh(): boolean {
    return this.clock() - this.leasesReadAt <= this.options.leaderLeaseMs;
  }

  /** How long a client should wait before re-sending to a shard without a usable leader. */
  get retryAfterMs(): number {
    return Math.max(100, Math.floor(this.options.leaderLeaseMs / 3));
  }

  /**
   * Join the cluster: create the tables if needed and check the shard count, retrying transient
   * failures with backoff (from 250 ms, doubling up to the leader lease) until it succeeds. Resolves
   * once the first attempt succeeded, or once it failed transiently or is still running after
   * `firstWaitMs` (the server then listens meanwhile, answering 503); the attempts go on. Rejects
   * when the first attempt fails for good (see `isPermanentJoinError`); a later such failure goes
   * to {@link onFatal}. Call once.
   */
  join(firstWaitMs: number): Promise<void> {
    this.joining = joinWithRetry({
      attempt: () => this.options.coordinator.start(this.options.shards),
      firstWaitMs,
      maxDelayMs: this.options.leaderLeaseMs,
      logger: this.options.logger,
      stopped: () => this.stopping,
      clock: this.time,
      onJoined: (shards) => this.joined(shards),
      onDown: (reason) => (this.coordinatorDown = reason),
    });
    return this.joining.first;
  }

  /**
   * Hear an error that waiting cannot fix, met while joining after {@link join} resolved (the
   * database came back and says the shard count differs, the role is refused, …): the host stops
   * the server. Called at once if it already happened; register it after {@link join}. Without a
   * handler the runtime stays out of the cluster, answering 503.
   */
  onFatal(handler: (err: Error) => void): void {
    this.joining?.onFatal(handler);
  }

  private joined(shards: number): void {
    this.shards = shards;
    this.terms = new Array<ShardTerm | null>(shards).fill(null);
    this.seen = new Array<Seen | null>(shards).fill(null);
    this.coordinatorDown = null;
    this.options.logger.info({ shards, serverId: this.options.serverId }, "joined the cluster");
    if (this.listening) void this.lead();
  }

  /**
   * Start the loop and the `LISTEN` for released shards once the server listens (and, if the
   * database was unreachable at start, once it has joined). Resolves once the first pass ran, or at
   * once when not joined yet (leadership then begins when it joins).
   */
  async start(): Promise<void> {
    this.listening = true;
    if (this.shards !== null) await this.lead();
  }

  private async lead(): Promise<void> {
    if (this.stopping || this.startedAt !== null) return;
    // A joining server waits a leader lease from here before taking anything.
    this.startedAt = this.clock();
    await this.listen();
    this.renewer.start();
    await this.pass();
    this.schedule();
  }

  /** The live members the last heartbeat answered, and when it was sent (this runtime's monotonic clock). */
  get memberList(): { readonly members: readonly LiveMember[]; readonly sentAt: number } {
    return { members: this.members, sentAt: this.membersSentAt };
  }

  /** True once this server may take shards: its member row is its own, past its join wait, not stopping. */
  private get ready(): boolean {
    const claimedAt = this.identity.claimedAt;
    return !this.stopping && this.startedAt !== null && claimedAt !== null && this.clock() - claimedAt >= this.options.leaderLeaseMs;
  }

  /**
   * Stop taking shards, leave the member list and give every led shard up (shard-mover.ts): handed
   * to its in-sync standby with its table where it has one or can get one in time (its waiters
   * re-send there), released with `NOTIFY` otherwise, so other servers take them at once.
   */
  async stop(): Promise<void> {
    if (this.stopping || this.adoptingBeforeStop) return;
    // Rows handed over to this member and not adopted yet are adopted first, so the stop hands
    // them on with their tables (replication/adopt-before-stop.ts). TEST ONLY: the
    // `stop-skips-handed-over` break leaves them to expire.
    const promoter = this.promoter;
    if (this.shards !== null && promoter !== null && this.options.breaks?.has("stop-skips-handed-over") !== true) {
      this.adoptingBeforeStop = true;
      await adoptBeforeStop({
        serverId: this.options.serverId,
        incarnation: this.identity.incarnation,
        readLeases: () => this.options.coordinator.readLeases(),
        ledEpoch: (shard) => this.terms[shard]?.epoch ?? null,
        forHandOver: (row) => promoter.forHandOver(row),
        busy: (shard) => promoter.busy(shard),
        adopt: (row, candidate) => this.adopt(row, candidate),
        now: this.clock,
        setTimer: (fn, ms) => this.time.setTimer(fn, ms),
        deadlineMs: this.options.leaderLeaseMs,
        awaitingHandOver: () => this.terms.flatMap((_, shard) => (this.awaitsHandOver(shard) ? [shard] : [])),
        intervalMs: Math.max(5, Math.floor(this.options.leaderLeaseMs / 50)),
        readOnce: this.options.breaks?.has("stop-ignores-acked-hand-over") === true,
      });
    }
    if (this.stopping) return;
    this.stopping = true;
    this.cancelTimer?.();
    this.joining?.cancel();
    if (this.shards === null) {
      await this.renewer.stop();
      await this.prober.close();
      return;
    }
    // Not waiting for a pass in flight: stopping serving and handing over must not wait on a slow
    // statement, and an acquisition that lands after this point releases itself.
    const { coordinator, logger } = this.options;
    // Leave the member list before releasing, so the servers that hear the NOTIFY compute their
    // shares without this one and take the shards at once (a hand-over names its taker: it does
    // not wait for this). A heartbeat in flight would put the row back after the delete: wait for
    // it first (bounded by the statement timeout). Renewals go on: a shard still getting a standby
    // serves until it is handed over.
    const left = this.renewer
      .leave()
      .then(() => coordinator.leave(this.identity))
      .then(() => logger.debug({}, "left the member list"))
      .catch((err: unknown) => logger.warn({ err }, "could not leave the member list at stop; the heartbeat ages out"));
    await this.mover.stopAll(this.terms.filter((t): t is ShardTerm => t !== null), left);
    await this.renewer.stop();
    await this.running?.catch(() => undefined);
    await this.prober.close();
  }

  /** A term failed on its own (gate closed, fenced extension matched nothing): give the shard up. */
  readonly failTerm = (term: ShardTerm, reason: string): void => {
    // "gate": only under the test break end-on-gate-close (a closed gate otherwise keeps the term).
    const kind: LossReason = reason.includes("gate") ? "gate" : "bound";
    if (kind === "gate" && this.terms[term.shard] === term) this.options.metrics.gateClosures.inc({});
    this.lose(term, kind, reason);
  };

  /** A heartbeat sent at `sentAt` answered the live members. */
  private heardMembers(members: LiveMember[], sentAt: number): void {
    this.members = members;
    this.membersSentAt = sentAt;
    if (!this.stopping) this.answering.observe(members);
    // Another live process took this server id over (this one was paused): lead nothing.
    if (this.identity.observe(members, sentAt) === "lost") {
      for (const term of this.terms) if (term !== null) this.lose(term, "duplicate", `another live process runs with --server-id ${this.options.serverId}`);
    }
  }

  private lose(term: ShardTerm, kind: LossReason, reason: string, handingOver = false): void {
    if (this.terms[term.shard] !== term) return;
    this.terms[term.shard] = null;
    if (handingOver) this.handing[term.shard] = term;
    term.end(unavailable(`this server stopped leading shard ${term.shard} (${reason}); re-send to its new leader`, this.retryAfterMs, { shard: term.shard }), handingOver);
    const { logger, metrics } = this.options;
    metrics.transitions.inc({ event: "lost" });
    metrics.losses.inc({ reason: kind });
    logger.info({ shard: term.shard, epoch: term.epoch, leaderId: term.leaderId, reason }, "shard lost");
    logServeInterval(term, this.options.logger);
    this.onTermEnded(term);
  }

  /**
   * The row of `term`'s shard moved to its standby by this server's own fenced statement: route
   * to the new holder now (421 with its URL, and `GET /v1/cluster` naming it with the new epoch)
   * rather than answering 503 until the next read of the rows. A view already past that epoch
   * is kept.
   */
  private noteHandedOver(term: ShardTerm, done: HandOverDone): void {
    const row = this.leases[term.shard];
    if (row === undefined || row.epoch >= done.moved.epoch) return;
    const { standby, moved, former } = done;
    const named = { standbyId: former?.serverId ?? null, standbyIncarnation: former?.incarnation ?? null, inSync: former !== undefined };
    this.leases[term.shard] = { ...row, holder: standby.serverId, incarnation: standby.incarnation, url: moved.url, leaderId: term.leaderId, epoch: moved.epoch, expired: false, ...named };
  }

  private schedule(): void {
    if (this.stopping) return;
    // The first pass that may take shards runs right when the join wait ends (counted from this
    // process's first heartbeat that held its member row).
    const claimedAt = this.identity.claimedAt;
    const joinWaitEnds = this.startedAt !== null && claimedAt !== null && !this.ready ? claimedAt + this.options.leaderLeaseMs : null;
    // After a failed read, the cadence counts from when it was sent (TEST ONLY: not with reread-after-cadence).
    const failedReadSentAt = this.options.breaks?.has("reread-after-cadence") === true ? null : this.failedReadSentAt;
    const delay = nextPassDelay({ leases: this.leases, seen: this.seen, now: this.clock(), leaderLeaseMs: this.options.leaderLeaseMs, joinWaitEnds, own: (row) => this.identity.isOwn(row), failedReadSentAt });
    this.cancelTimer = this.time.setTimer(() => {
      void this.pass().finally(() => this.schedule());
    }, Math.ceil(delay));
  }

  private async listen(): Promise<void> {
    const { coordinator } = this.options;
    const rewatch = (err: Error): void => {
      if (this.stopping) return;
      this.warn(err, "the LISTEN connection to PostgreSQL broke; reconnecting");
      this.time.setTimer(() => void this.listen(), this.retryAfterMs);
    };
    try {
      await coordinator.watch((shard) => {
        // Test mode (--log-level debug): when a NOTIFY arrived, and whether a pass was running.
        this.options.logger.debug({ shard, passRunning: this.running !== null }, "NOTIFY heard");
        void this.adoptNotified(shard);
        void this.pass();
      }, rewatch);
    } catch (err) {
      rewatch(err instanceof Error ? err : new Error(String(err)));
    }
  }

  /**
   * One pass, never two at once: a pass asked for while one runs runs once right after it (it
   * must see rows changed meanwhile, such as a shard released by `NOTIFY`). Renewals are not part
   * of a pass, so nothing here can delay one.
   */
  private pass(): Promise<void> {
    if (this.running !== null) {
      this.again = true;
      return this.running;
    }
    this.running = this.runPass()
      .catch((err: unknown) => this.warn(err, "cluster pass failed"))
      .finally(() => {
        this.running = null;
        if (this.again && !this.stopping) {
          this.again = false;
          void this.pass();
        }
      });
    return this.running;
  }

  private async runPass(): Promise<void> {
    if (this.stopping) return;
    // Test mode (--log-level debug): every pass reports each term's serve interval so far, so a
    // checker has them even for a server killed with SIGKILL.
    for (const term of this.terms) if (term !== null) logServeInterval(term, this.options.logger);
    let leases: ShardLease[];
    const sentAt = this.clock();
    try {
      leases = await this.options.coordinator.readLeases();
    } catch (err) {
      this.coordinatorDown = err instanceof Error ? err.message : String(err);
      this.failedReadSentAt = sentAt;
      return this.warn(err, "could not read the lease rows from PostgreSQL; leaders keep serving until their gates close");
    }
    this.coordinatorDown = null;
    this.failedReadSentAt = null;
    this.observe(leases, sentAt);
    const record = (): Promise<void> => recordImmutables(this.terms, this.options.coordinator).catch((err: unknown) => this.warn(err, "could not record immutable timestamps; will retry next round"));
    await recordBesideDecide(record, () => this.decide(), this.options.breaks?.has("immutables-before-decide") === true);
  }

  private observe(leases: ShardLease[], readSentAt: number): void {
    this.leases = leases;
    this.leasesReadAt = readSentAt;
    const keepSynced = this.options.breaks?.has("release-synced-orphan") !== true;
    let orphans = observeRows(this.seen, leases, this.clock(), this.identity, this.heldEpochs(leases.length), false);
    // Rows handed over to this standby are adopted with its replica (a balance move's row names
    // its former leader as in-sync standby until then); the rest are released, except those that
    // name an in-sync standby, left to it (see observeRows).
    if (this.promoter !== null && !this.stopping) orphans = this.promoter.adoptOrAnswer(orphans, leases, (row, candidate) => this.adopt(row, candidate));
    if (keepSynced) orphans = orphans.filter((o) => !namesSyncedStandby(leases[o.shard]));
    if (orphans.length > 0) void this.options.coordinator.release(this.options.serverId, orphans).catch(() => undefined);
  }

  /**
   * The epoch of each shard's row this process still owns: a term it leads (a balance hand-over's
   * too, its gate shut while the taker acknowledges and the row moves), or one whose stop
   * hand-over is running (TEST ONLY: neither hand-over's with `release-handing-over`).
   */
  private heldEpochs(shards: number): (number | undefined)[] {
    const keepHandOvers = this.options.breaks?.has("release-handing-over") !== true;
    const epochs: (number | undefined)[] = [];
    for (let shard = 0; shard < Math.max(shards, this.terms.length); shard++) {
      const giving = this.handing[shard] ?? null;
      // A finished hand-over's term is forgotten here, so its table is not kept alive.
      if (giving !== null && !giving.handingOver) this.handing[shard] = null;
      const handingEpoch = keepHandOvers && giving?.handingOver === true ? giving.epoch : undefined;
      const led = this.terms[shard] ?? null;
      epochs.push(led !== null && (keepHandOvers || !led.pausedForHandOver) ? led.epoch : handingEpoch);
    }
    return epochs;
  }

  private async decide(): Promise<void> {
    if (this.stopping) return;
    const now = this.clock();
    // A joining server waits a leader lease first, so it has watched every row long enough and
    // the others have seen its heartbeat before it takes anything.
    if (!this.ready) return;
    const plan = planShards({
      leases: this.leases,
      seen: this.seen,
      now,
      leaderLeaseMs: this.options.leaderLeaseMs,
      serverId: this.options.serverId,
      incarnation: this.identity.incarnation,
      members: this.members.map((m) => m.serverId),
      joining: this.members.filter((m) => !m.ready).map((m) => m.serverId),
      silent: this.silentMembers(),
      led: this.terms.map((t) => t !== null),
    });
    // A few at a time: more would queue for the statement pool, and one that waits there past the
    // connect timeout fails unsent, leaving its shard unled until the next pass (seen at cold
    // starts on a loaded machine: acquisitions trickling in for 10 s and more).
    const queue = [...plan.take];
    const lane = async (): Promise<void> => {
      for (let shard = queue.shift(); shard !== undefined; shard = queue.shift()) await this.acquire(shard);
    };
    await Promise.all(Array.from({ length: Math.min(ACQUIRE_LANES, queue.length) }, lane));
    // A hand-over comes from a member that is leaving, a resumed process's list is old: balance
    // only by a member list heard since this server last took a shard.
    // The move runs in the background (its taker may need a snapshot first): passes go on meanwhile.
    if (plan.release !== null && this.membersSentAt > this.tookAt) this.mover.balance(plan.release, plan.share);
  }

  /**
   * Ready listed members that do not answer (answering-members.ts); none, TEST ONLY, with
   * `balance-to-silent-member` (the shares then count every member whose heartbeat row is fresh).
   */
  private silentMembers(): string[] {
    if (this.options.breaks?.has("balance-to-silent-member") === true) return [];
    return this.members.filter((m) => m.ready && !this.answering.answering(m, this.leases)).map((m) => m.serverId);
  }

  private acquire(shard: number): Promise<void> {
    const row = this.leases[shard];
    if (row === undefined || this.terms[shard] !== null) return Promise.resolve();
    return this.starter.acquire(row);
  }

  /**
   * A NOTIFY of `shard`: when this member holds a replica of it, it may be the hand-over of it to
   * this standby; the fenced adoption is tried at once, alongside the pass (which may be busy, and
   * reads every row first), so the taker serves a statement and a pass sooner (term-starter.ts).
   * Answers whether it adopted the row (`null`: nothing tried; see `TermStarter.adoptOnNotify`).
   */
  private adoptNotified(shard: number): Promise<boolean | null> {
    if (this.stopping || (this.terms[shard] ?? null) !== null) return Promise.resolve(null);
    const tookAt = this.clock();
    return this.starter.adoptOnNotify(shard, this.leases[shard]).then((adopted) => {
      if (adopted === true) this.tookAt = Math.max(this.tookAt, tookAt);
      // Tried and not adopted: a pass that ran meanwhile left the shard alone; one more sees its row as it is now.
      else if (adopted === false) void this.pass();
      return adopted;
    });
  }

  /**
   * This member's replica of `shard` acknowledged its leader's hand-over entry: the row moves to
   * this member next, and its NOTIFY may be lost, with the answers of the next reads of the rows.
   * The fenced adoption is tried on a timer, for about a leader lease, until adopted
   * (replication/adopt-after-ack.ts; found by `pnpm sim`, seed 50986). TEST ONLY: not with the
   * `adopt-only-on-notify` break (the NOTIFY and the passes alone adopt).
   */
  handOverAcknowledged(shard: number): void {
    if (this.options.breaks?.has("adopt-only-on-notify") === true || this.stopping) return;
    this.afterAck.acknowledged(shard);
  }

  /** True when this member leads no term of `shard` and its replica's last entry is its leader's hand-over entry: the row may move here any moment. */
  private awaitsHandOver(shard: number): boolean {
    return (this.terms[shard] ?? null) === null && this.promoter?.awaitsHandOver(shard) === true;
  }

  /** A row handed over to this standby: start its term with the replica once the fenced adoption wrote the row. */
  private adopt(row: ShardLease, candidate: PromotionCandidate): Promise<void> {
    this.tookAt = this.clock();
    this.options.logger.debug({ shard: row.shard, epoch: row.epoch }, "adopting a handed-over shard");
    return this.starter.adopt(row, candidate);
  }

  /** Log a bug met while serving (a lock batch entry that threw something not a LeaseholdError). */
  bug(err: unknown): void {
    this.options.logger.error({ err }, "internal error while running a lock batch entry");
  }

  private warn(err: unknown, msg: string): void {
    // At most one warning a second: an unreachable PostgreSQL must not flood the log.
    const now = this.clock();
    if (now - this.lastWarnAt < 1_000) return;
    this.lastWarnAt = now;
    this.options.logger.warn({ err }, msg);
  }
}
