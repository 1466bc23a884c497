import { AdoptAfterAck } from "./replication/adopt-after-ack.js";
import type { ClusterRuntimeOptions } from "./cluster-runtime-options.js";
import { AnsweringMembers } from "./answering-members.js";
import type { LiveMember } from "./coordinator.js";
import { HealthProber } from "./health-prober.js";
import { joinWithRetry } from "./join-retry.js";
import { LeaseRenewer } from "./lease-renewer.js";
import type { Seen } from "./plan-shards.js";
import { ShardMover } from "./replication/shard-mover.js";
import { RuntimeHandOvers } from "./runtime-hand-overs.js";
import { TermStarter } from "./term-starter.js";
import type { ShardTerm } from "./shard-term.js";

export type { ClusterRuntimeOptions } from "./cluster-runtime-options.js";

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
 *
 * Its state and pass loop are in cluster-passes.ts ({@link ClusterPasses}), its stop and
 * hand-overs in runtime-hand-overs.ts ({@link RuntimeHandOvers}); this file joins and wires.
 */
export class ClusterRuntime extends RuntimeHandOvers {
  private listening = false;
  protected override readonly renewer: LeaseRenewer;
  protected override readonly starter: TermStarter;
  protected override readonly mover: ShardMover;
  protected override readonly answering: AnsweringMembers;
  protected override readonly prober: HealthProber;
  protected override readonly afterAck: AdoptAfterAck;
  /** Hears every term that started, in the turn it did, before it answers anything (the leader side resumes its replication). */
  onTermStarted: (term: ShardTerm) => void = () => undefined;

  constructor(options: ClusterRuntimeOptions) {
    super(options);
    const time = this.time;
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

  /** Log a bug met while serving (a lock batch entry that threw something not a LeaseholdError). */
  bug(err: unknown): void {
    this.options.logger.error({ err }, "internal error while running a lock batch entry");
  }
}
