import type { AnsweringMembers } from "./answering-members.js";
import type { ClusterRuntimeOptions } from "./cluster-runtime-options.js";
import type { LiveMember, ShardLease } from "./coordinator.js";
import { gateMargin } from "./margins.js";
import { MemberIdentityWatch } from "./member-identity.js";
import { namesSyncedStandby, nextPassDelay, observeRows, planShards, type Seen } from "./plan-shards.js";
import { realProcessClock, type ProcessClock } from "./process-clock.js";
import { recordBesideDecide, recordImmutables } from "./record-immutables.js";
import type { PromotionCandidate, ReplicaPromoter } from "./replication/promote-replica.js";
import type { ShardMover } from "./replication/shard-mover.js";
import { logServeInterval } from "./serve-interval.js";
import type { ShardTerm } from "./shard-term.js";
import type { TermStarter } from "./term-starter.js";

/** Acquisitions in flight at once (of a statement pool of 4, leaving room for reads and bound loads). */
const ACQUIRE_LANES = 3;

/**
 * The state of a {@link ClusterRuntime} and its pass loop: every third of the leader lease (and at
 * once on a `NOTIFY`) a pass reads the lease rows, records immutable timestamps, then takes shards
 * that are free (released at once; expired only after their row was seen unchanged for a whole
 * leader lease) and gives up surplus ones, one at a time. Passes never run two at once, and
 * renewals are not part of a pass (lease-renewer.ts), so no pass ever delays one. Stopping and
 * hand-overs are in runtime-hand-overs.ts, joining and the wiring in cluster-runtime.ts.
 */
export abstract class ClusterPasses {
  /** This server's term per shard, `null` where it leads nothing (empty until joined). */
  terms: (ShardTerm | null)[] = [];
  /**
   * Per shard, the term last given up with its hand-over still running (gate closed, row not yet
   * moved): its row still names this process at the term's epoch, and a pass must not take it for
   * an orphan and release it under the hand-over (which then matches nothing: the table is lost).
   */
  protected readonly handing: (ShardTerm | null)[] = [];
  /** Lease rows as last read (for routing answers and `GET /v1/cluster`). */
  leases: ShardLease[] = [];
  /** Monotonic time the last successful read of {@link leases} was sent; see {@link leasesFresh}. */
  private leasesReadAt = -Infinity;
  /** The cluster's shard count, `null` until this server has joined (reached PostgreSQL once). */
  shards: number | null = null;
  /** Per shard, what the passes saw of its row and since when (plan-shards.ts `Seen`), `null` before. */
  protected seen: (Seen | null)[] = [];
  /** When the last pass's read of the rows was sent, if that read failed; `null` when it answered (see `nextPassDelay`). */
  private failedReadSentAt: number | null = null;
  /** The live members the last heartbeat answered (this server alone, not ready, until then). */
  protected members: LiveMember[];
  /** Monotonic clock (ms): `ClusterRuntimeOptions.clock`, else the process clock's. */
  protected readonly clock: () => number;
  /** When leadership began, `null` before. */
  protected startedAt: number | null = null;
  /** This process's server id and incarnation, and whether the member row is its own. */
  readonly identity: MemberIdentityWatch;
  /** Wall clock (ms since the epoch): `ClusterRuntimeOptions.wallClock`, else the process clock's. */
  protected readonly wallClock: () => number;
  /** How long before a taker could act a gate closes (margins.ts `gateMargin`). */
  protected readonly margin: number;
  /** Cancels the timer of the next pass. */
  protected cancelTimer: (() => void) | null = null;
  /** The process's clocks and timers (ClusterRuntimeOptions.time). */
  protected readonly time: ProcessClock;
  /** The pass running now, `null` when none. */
  protected running: Promise<void> | null = null;
  private again = false;
  /** True once {@link ClusterRuntime.stop} began: passes take nothing more. */
  protected stopping = false;
  /**
   * When the heartbeat that answered {@link members} was sent, and when this server last took a
   * shard (acquired, took over or adopted a hand-over): balance waits for a member list heard
   * since, so a server that took shards on an old list (a hand-over from a leaving member, or a
   * standby resumed from SIGSTOP taking its shard over) never gives one away by it.
   */
  protected membersSentAt = -Infinity;
  /** See {@link membersSentAt}. */
  protected tookAt = -Infinity;
  private lastWarnAt = -Infinity;
  /** Why the last pass or join attempt could not reach PostgreSQL, or `null`. */
  coordinatorDown: string | null = null;
  /** Takes over shards with this member's replicas (`--replicas 1`), `null`: every term starts empty. */
  promoter: ReplicaPromoter | null = null;
  /** The URL other servers and clients reach this one at; set once the server listens. */
  url: string;
  /** Acquires shards and starts their terms (empty, or with a promoted replica). */
  protected abstract readonly starter: TermStarter;
  /** Gives shards up on purpose (stop, balance): handed over with their tables where it can. */
  protected abstract readonly mover: ShardMover;
  /** Which listed members answer: only they count in the shares and take shards by balance. */
  protected abstract readonly answering: AnsweringMembers;

  constructor(protected readonly options: ClusterRuntimeOptions) {
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

  /** True once this server may take shards: its member row is its own, past its join wait, not stopping. */
  protected get ready(): boolean {
    const claimedAt = this.identity.claimedAt;
    return !this.stopping && this.startedAt !== null && claimedAt !== null && this.clock() - claimedAt >= this.options.leaderLeaseMs;
  }

  /** Set the timer of the next pass (nextPassDelay). */
  protected schedule(): void {
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

  /** `LISTEN` for released shards: each NOTIFY tries an adoption and runs a pass; a broken connection is re-made. */
  protected async listen(): Promise<void> {
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
  protected pass(): Promise<void> {
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

  /** A row handed over to this standby: start its term with the replica (runtime-hand-overs.ts). */
  protected abstract adopt(row: ShardLease, candidate: PromotionCandidate): Promise<void>;

  /** A NOTIFY of `shard`: try the fenced adoption of a hand-over to this member (runtime-hand-overs.ts). */
  protected abstract adoptNotified(shard: number): Promise<boolean | null>;

  /** Log a warning, at most one a second. */
  protected warn(err: unknown, msg: string): void {
    // At most one warning a second: an unreachable PostgreSQL must not flood the log.
    const now = this.clock();
    if (now - this.lastWarnAt < 1_000) return;
    this.lastWarnAt = now;
    this.options.logger.warn({ err }, msg);
  }
}
