import type { Logger } from "pino";
import { unavailable } from "../cluster-errors.js";
import type { Coordinator, LiveMember, ShardLease } from "../coordinator.js";
import { realProcessClock } from "../process-clock.js";
import type { ShardTerm } from "../shard-term.js";
import { chooseStandbys, standbyToMoveTo } from "./choose-standbys.js";
import type { ClusterKeyHolder } from "./cluster-key-holder.js";
import { snapshotShard } from "./replicated-tables.js";
import type { ReplicationClock } from "./replication-clock.js";
import type { ReplicationTransport } from "./replication-sender.js";
import type { ReplicationMetrics, ShardReplicationView } from "./replication-metrics.js";
import { ShardReplication, type StandbyTarget } from "./shard-replication.js";
import type { StandbySide } from "./standby-side.js";
import { createEchoReplicationTransport } from "./echo-replication-transport.js";
import { createStreamReplicationTransport } from "./stream-replication-transport.js";
import { TermReplicator } from "./term-replicator.js";

/** What {@link LeaderSide} reads of the cluster runtime. */
export interface LeaderSideRuntime {
  /** This server's term per shard (`null`: not led here). */
  readonly terms: readonly (ShardTerm | null)[];
  /** The lease rows as last read. */
  readonly leases: readonly ShardLease[];
  readonly identity: { readonly incarnation: string };
  /** The live members the last heartbeat answered, and when that heartbeat was sent (the replication clock's time base). */
  readonly memberList: { readonly members: readonly LiveMember[]; readonly sentAt: number };
}

/** What a {@link LeaderSide} is made with. */
export interface LeaderSideOptions {
  readonly runtime: LeaderSideRuntime;
  readonly serverId: string;
  readonly coordinator: Coordinator;
  readonly key: ClusterKeyHolder;
  readonly leaderLeaseMs: number;
  readonly logger: Logger;
  readonly metrics: ReplicationMetrics;
  /** This member's standby side: replicas of shards it no longer stands by for are dropped. */
  readonly standby: StandbySide;
  /** Default: the real clock ({@link realProcessClock}). */
  readonly clock?: ReplicationClock | undefined;
  /**
   * A replication connection to a standby of `shard`. Default: the replication stream
   * (stream-replication-transport.ts); the deterministic simulator passes one over its network.
   */
  readonly connect?: ((target: StandbyTarget, shard: number) => ReplicationTransport) | undefined;
  /** TEST ONLY (`LEASEHOLD_TEST_BREAK=promote-any-replica`): replicas of superseded terms are kept (see `ReplicaPromoter`). Default false. */
  readonly keepStaleReplicas?: boolean | undefined;
  /** TEST ONLY (`LEASEHOLD_TEST_BREAK=answer-before-ack`): see `SyncRuleOptions.unsafeAnswerFirst`. Default false. */
  readonly unsafeAnswerFirst?: boolean | undefined;
  /** TEST ONLY (`LEASEHOLD_TEST_BREAK=snapshot-after-position`): see `ShardReplicationOptions.unsafeSnapshotAfterPosition`. Default false. */
  readonly unsafeSnapshotAfterPosition?: boolean | undefined;
  /** TEST ONLY (`LEASEHOLD_TEST_BREAK=move-unknown-as-failed`): see `ShardReplicationOptions.unsafeUnknownMoveAsFailed`. Default false. */
  readonly unsafeUnknownMoveAsFailed?: boolean | undefined;
  /** TEST ONLY (`LEASEHOLD_TEST_REPLICATION_WINDOW`): see `ReplicationSenderOptions.maxInFlight`. Default: the sender's. */
  readonly maxInFlight?: number | undefined;
  /** TEST ONLY (`LEASEHOLD_TEST_BREAK=no-standby-probe`): idle standbys are never probed (see `ShardReplication.probe`). Default false. */
  readonly unprobedStandbys?: boolean | undefined;
  /**
   * TEST ONLY (`LEASEHOLD_TEST_BREAK=move-standby-unprotected`): a kept standby is moved by
   * recording it not in sync first (the new one is then named and synced as any standby), not by
   * `ShardReplication.moveStandby`. Default false.
   */
  readonly unprotectedStandbyMoves?: boolean | undefined;
  /** BENCHMARK ONLY (`LEASEHOLD_TEST_ECHO_STANDBY_PORT`): every standby connection goes to this local echo server instead (echo-replication-transport.ts). Default: none, the real standby. */
  readonly echoStandbyPort?: number | undefined;
}

/** Only grants hold their answer (DESIGN.md: a release is answered at once). */
const isGrant = (entry: unknown): boolean => (entry as { type?: unknown }).type === "grant";

/**
 * The leader's side of replication on one member (`--replicas 1`): every third of the leader
 * lease it gives each term this server leads a {@link TermReplicator} (its table's change feed into
 * the shard's log; grant answers held until acknowledged), attaches a standby to each term without
 * one in sync (chosen so standbys spread, {@link chooseStandbys}), and drops replicas this member
 * holds of shards it no longer stands by for.
 *
 * The runtime promotes these replicas (promote-replica.ts) and hands shards over at SIGTERM and
 * for balance (shard-mover.ts, which may also name a standby itself: a balance move's taker).
 */
export class LeaderSide {
  private readonly streams = new Map<ShardTerm, TermReplicator>();
  private readonly notBefore = new Map<ShardTerm, number>();
  /** Per replica held: its stream, and the version of its row when that stream was first seen here (dropStaleReplicas). */
  private readonly firstSeen = new Map<number, { readonly streamId: string; readonly version: number }>();
  private readonly clock: ReplicationClock;
  private cancel: (() => void) | null = null;
  private ticking = false;
  private stopped = false;

  constructor(private readonly options: LeaderSideOptions) {
    this.clock = options.clock ?? realProcessClock;
  }

  /** Begin the cadence (a third of the leader lease). */
  start(): void {
    const every = Math.max(10, Math.floor(this.options.leaderLeaseMs / 3));
    const loop = (): void => {
      if (this.stopped) return;
      void this.tick().finally(() => {
        if (!this.stopped) this.cancel = this.clock.setTimer(loop, every);
      });
    };
    loop();
  }

  /** Stop the cadence and every stream. */
  stop(): void {
    this.stopped = true;
    this.cancel?.();
    // Each term keeps its replicator: an answer still pending is refused with the close error.
    for (const replicator of this.streams.values()) {
      replicator.stop();
      replicator.replication.close(unavailable("this server is stopping; retry with another", 100));
    }
    this.streams.clear();
  }

  /** The replication of every shard led here now (for the metrics). */
  views(): ShardReplicationView[] {
    return [...this.streams.values()].map((r) => r.replication.view());
  }

  /** One round: follow the terms, probe the standbys, attach standbys where needed, drop stale replicas. */
  async tick(): Promise<void> {
    if (this.ticking || this.options.key.key === null) return;
    this.ticking = true;
    try {
      this.followTerms();
      this.dropRestartedStandbys();
      if (this.options.unprobedStandbys !== true) for (const replicator of this.streams.values()) replicator.replication.probe();
      await this.attachStandbys();
      await this.moveKeptStandbys();
      this.dropStaleReplicas();
    } catch (err) {
      this.options.logger.warn({ err }, "replication round failed; retrying on the next one");
    } finally {
      this.ticking = false;
    }
  }

  private followTerms(): void {
    const { runtime } = this.options;
    for (const [term, replicator] of this.streams) {
      // A term handing over keeps its stream until the hand-over closes it (hand-over.ts).
      if ((runtime.terms[term.shard] === term && !term.isEnded) || term.handingOver) continue;
      replicator.stop();
      replicator.replication.close(unavailable("this server's term of the shard ended; retry", 100));
      this.streams.delete(term);
      this.notBefore.delete(term);
    }
    for (const term of runtime.terms) if (term !== null) this.follow(term);
  }

  /**
   * Give `term` its replicator now, if it has none (the runtime calls this in the turn a term
   * starts, before it answers anything; each round does it for any it missed). When the term's
   * row names an in-sync standby already (a balance move's former leader, left named by the
   * adoption: it holds the table as handed over), the replication resumes to it at once, so no
   * grant is answered that it lacks while the row names it; a standby this member cannot reach
   * (no URL known, or no cluster key yet) is recorded not in sync before anything is answered.
   */
  follow(term: ShardTerm): void {
    if (term.isEnded || this.streams.has(term) || this.stopped) return;
    const replicator = new TermReplicator(term.service, this.replicationOf(term), { needsAck: isGrant });
    this.streams.set(term, replicator);
    // Attach before the feed starts: an answer is never ready between the two (same turn).
    term.attachReplicator(replicator);
    replicator.start();
    const row = this.options.runtime.leases[term.shard];
    if (row === undefined || row.epoch !== term.epoch || !row.inSync || row.standbyId === null || row.standbyIncarnation === null) return;
    const { standbyId, standbyIncarnation } = row;
    const member = this.options.runtime.memberList.members.find((m) => m.serverId === standbyId && m.incarnation === standbyIncarnation);
    const url = this.options.key.key === null ? undefined : (member?.url ?? undefined);
    replicator.replication.resume(url === undefined ? null : { serverId: standbyId, incarnation: standbyIncarnation, url });
  }

  private replicationOf(term: ShardTerm): ShardReplication {
    const { serverId, coordinator, key, leaderLeaseMs, logger, metrics, runtime } = this.options;
    return new ShardReplication({
      term: { shard: term.shard, epoch: term.epoch, serverId, incarnation: runtime.identity.incarnation },
      leaderId: term.leaderId,
      coordinator,
      connect: (target) => {
        if (this.options.connect !== undefined) return this.options.connect(target, term.shard);
        const echo = this.options.echoStandbyPort;
        if (echo !== undefined) return createEchoReplicationTransport({ port: echo });
        return createStreamReplicationTransport({ url: target.url, shard: term.shard, key: key.key!, timeoutMs: leaderLeaseMs });
      },
      snapshot: () => snapshotShard(term.service, term.leaseWaitLeftMs()),
      maxInFlight: this.options.maxInFlight,
      clock: this.clock,
      lateMs: Math.max(1, Math.floor(leaderLeaseMs / 3)),
      logger,
      metrics,
      // The renewal will find the term lost as well; until then its held answers were refused.
      onFenced: () => logger.warn({ shard: term.shard, epoch: term.epoch }, "a standby write matched nothing: this server no longer leads the shard"),
      onStandbyLost: () => this.notBefore.set(term, this.clock.now() + leaderLeaseMs / 3),
      unsafeAnswerFirst: this.options.unsafeAnswerFirst,
      unsafeSnapshotAfterPosition: this.options.unsafeSnapshotAfterPosition,
      unsafeUnknownMoveAsFailed: this.options.unsafeUnknownMoveAsFailed,
    });
  }

  /**
   * A standby that restarted holds none of the log, and one that stopped or died holds nothing
   * any more, but an idle shard sends it nothing to refuse or be late with: its row would say in
   * sync until the next grant (and a takeover or hand-over would count on it). So each round
   * compares every standby with the members the last heartbeat heard (only a list sent after the
   * standby was attached: an older one may predate the restart the attach already saw); another
   * incarnation, or no member row at all (it left the list at SIGTERM, or its heartbeat aged out),
   * records not-in-sync now, and a later round attaches a standby again.
   */
  private dropRestartedStandbys(): void {
    const { members, sentAt } = this.options.runtime.memberList;
    for (const [term, replicator] of this.streams) {
      const replication = replicator.replication;
      const standby = replication.standby;
      if (term.isEnded || standby === null || replication.rule.state === "out" || sentAt <= replication.attachedAt) continue;
      const member = members.find((m) => m.serverId === standby.serverId);
      const where = { shard: term.shard, epoch: term.epoch, standby: standby.serverId, incarnation: standby.incarnation };
      if (member === undefined) {
        this.options.logger.warn(where, "the standby left the member list (stopped, or its heartbeat aged out): recording it not in sync");
      } else {
        // An unknown incarnation (a list not read from the database) says nothing.
        const heard = member.incarnation;
        if (heard === undefined || heard === null || heard === standby.incarnation) continue;
        this.options.logger.warn({ ...where, heard }, "the standby restarted (its member row names another incarnation): recording it not in sync");
      }
      replication.dropStandby();
    }
  }

  private async attachStandbys(): Promise<void> {
    const now = this.clock.now();
    const needing = [...this.streams].filter(([term, r]) => r.replication.rule.state === "out" && (this.notBefore.get(term) ?? 0) <= now);
    if (needing.length === 0) return;
    const { coordinator, leaderLeaseMs, serverId, runtime } = this.options;
    const members = await coordinator.readStandbyCandidates(2 * leaderLeaseMs);
    const chosen = chooseStandbys({ leader: serverId, members, leases: runtime.leases, shards: needing.map(([t]) => t.shard) });
    for (const [term, replicator] of needing) {
      const member = members.find((m) => m.serverId === chosen.get(term.shard));
      if (member === undefined) continue;
      this.notBefore.set(term, now + leaderLeaseMs);
      void replicator.replication.attach({ serverId: member.serverId, incarnation: member.incarnation, url: member.url });
    }
  }

  /**
   * A term whose row names the standby its adoption kept (a balance move's former leader, which
   * this leader did not choose) moves it, without a moment unprotected
   * (`ShardReplication.moveStandby`), to the member standbys spread best to, when that member is
   * standby of fewer shards than the kept one ({@link standbyToMoveTo}); else it keeps it. Without
   * this, every former leader would stay its taker's standby for good, and standbys would not spread.
   */
  private async moveKeptStandbys(): Promise<void> {
    const now = this.clock.now();
    const kept = [...this.streams].filter(([term, r]) => r.replication.keptFormer && !r.replication.moving && (this.notBefore.get(term) ?? 0) <= now);
    if (kept.length === 0) return;
    const { coordinator, leaderLeaseMs, serverId, runtime } = this.options;
    const members = await coordinator.readStandbyCandidates(2 * leaderLeaseMs);
    // Each move decided counts against its member for the next (the rows say so only later).
    const leases = runtime.leases.map((row) => ({ shard: row.shard, standbyId: row.standbyId }));
    for (const [term, replicator] of kept) {
      const replication = replicator.replication;
      const current = replication.standby;
      if (current === null || !replication.keptFormer) continue;
      const to = standbyToMoveTo({ leader: serverId, members, leases, shard: term.shard, current: current.serverId });
      const member = members.find((m) => m.serverId === to);
      if (member === undefined) {
        replication.keepFormer();
        continue;
      }
      const row = leases.find((r) => r.shard === term.shard);
      if (row !== undefined) row.standbyId = member.serverId;
      this.notBefore.set(term, now + leaderLeaseMs);
      // TEST ONLY (move-standby-unprotected): not in sync first; the next round names the new one.
      if (this.options.unprotectedStandbyMoves === true) {
        replication.keepFormer();
        replication.dropStandby();
        this.notBefore.set(term, now);
        continue;
      }
      replication
        .moveStandby({ serverId: member.serverId, incarnation: member.incarnation, url: member.url })
        .catch((err: unknown) => this.options.logger.warn({ shard: term.shard, epoch: term.epoch, err }, "moving the standby failed; the standby stays"));
    }
  }

  /**
   * Drop replicas of terms that moved on, or whose row names another standby now. The rows are
   * this server's last read, which may predate the snapshot: a leader names its new standby only
   * after the snapshot arrived, so a row read before still names the previous standby. "Names
   * another" therefore counts only on a row version newer than the one read when the replica's
   * stream was first seen (an epoch moved on can never be a stale read: epochs only grow).
   */
  private dropStaleReplicas(): void {
    const { standby, runtime } = this.options;
    if (this.options.keepStaleReplicas === true) return;
    const shards = standby.store.shards();
    for (const shard of this.firstSeen.keys()) if (!shards.includes(shard)) this.firstSeen.delete(shard);
    for (const shard of shards) {
      const replica = standby.store.get(shard);
      const row = runtime.leases[shard];
      if (replica === undefined || row === undefined) continue;
      const seen = this.firstSeen.get(shard);
      if (seen === undefined || seen.streamId !== replica.stream.streamId) this.firstSeen.set(shard, { streamId: replica.stream.streamId, version: row.version });
      const readSince = row.version > (this.firstSeen.get(shard)?.version ?? row.version);
      const moved = row.epoch > replica.stream.epoch;
      // A row naming another standby in sync may be moving its standby to this member
      // (`ShardReplication.moveStandby`: the row names it only once it holds the snapshot): the
      // replica is dropped once the row says not in sync, or when its epoch moves on.
      const other = readSince && row.epoch === replica.stream.epoch && !row.inSync && row.standbyIncarnation !== null && row.standbyIncarnation !== runtime.identity.incarnation;
      if (moved || other) {
        standby.store.drop(shard);
        this.firstSeen.delete(shard);
      }
    }
  }
}
