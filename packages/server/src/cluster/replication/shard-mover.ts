import type { HandOverReason, LossReason } from "../cluster-metrics.js";
import type { ClusterRuntimeOptions } from "../cluster-runtime-options.js";
import type { HeldTerm, LiveMember, ShardLease } from "../coordinator.js";
import { realProcessClock } from "../process-clock.js";
import type { ShardTerm } from "../shard-term.js";
import { chooseStandbys } from "./choose-standbys.js";
import { chooseTaker } from "./choose-taker.js";
import { balanceHandOver, type FormerTable } from "./balance-hand-over.js";
import { canHandOver, handOverTerm, type HandOverDone } from "./hand-over.js";
import type { ReplicaPromoter } from "./promote-replica.js";
import type { ShardReplication, StandbyTarget } from "./shard-replication.js";
import { syncStandby } from "./sync-standby.js";

/**
 * Leader leases a stopping leader tries to get an in-sync standby for a shard without one: long
 * enough for a snapshot and the in-sync record on a loaded machine, short enough that a stop stays
 * bounded (its hand-over then waits at most one more leader lease for the final acknowledgement).
 */
export const STOP_SYNC_LEASES = 2;

/**
 * Leader leases a balance move waits for its taker to come in sync before it gives the move up
 * (the leader keeps the shard and a later pass tries again): it serves meanwhile, so this only
 * bounds how long one attempt holds the single move slot.
 */
export const BALANCE_SYNC_LEASES = 3;

/** What a {@link ShardMover} reads of, and asks of, its runtime. */
export interface ShardMoverHost {
  /**
   * The runtime's settings; of its `breaks` (TEST ONLY), `balance-by-release` and
   * `stop-release-unsynced` switch these hand-overs off, `move-row-before-gate` makes a balance
   * hand-over move the row before it ends the term, `hand-over-stale-ack` lets a hand-over complete
   * on an earlier cumulative acknowledgement, `balance-abandon-release` releases a balance move's
   * shard when its taker does not acknowledge, and `balance-to-silent-member` lets a member that
   * does not answer be chosen as a taker.
   */
  readonly options: Pick<ClusterRuntimeOptions, "coordinator" | "serverId" | "leaderLeaseMs" | "logger" | "metrics" | "breaks" | "handOverPauseMs" | "time">;
  /** This process's incarnation (the leader's, in every fenced write). */
  readonly incarnation: string;
  /** The term this server leads of `shard` now, `null` when none. */
  readonly led: (shard: number) => ShardTerm | null;
  /** Every term this server leads now. */
  readonly terms: () => readonly ShardTerm[];
  readonly leases: () => readonly ShardLease[];
  readonly members: () => readonly LiveMember[];
  /**
   * True while the member answers (its health probe answered within a leader lease, and its own
   * terms renew on time): only such a member is a balance target (DESIGN.md "Hand-over with state").
   */
  readonly answering: (member: LiveMember) => boolean;
  /** End `term` (gate closed); `handingOver` keeps its replication open for the hand-over. */
  readonly lose: (term: ShardTerm, kind: LossReason, reason: string, handingOver: boolean) => void;
  /**
   * `term`'s row moved to its standby (`done`): the runtime's view of the rows names the new
   * holder at once, so this server answers 421 with its URL rather than 503 until its next read.
   */
  readonly handedOver: (term: ShardTerm, done: HandOverDone) => void;
  readonly stopping: () => boolean;
  /** Log a statement failure (rate-limited by the runtime). */
  readonly warn: (err: unknown, msg: string) => void;
  /**
   * The promoter of this member's replicas (a balance move's former table is kept there), `null`
   * without replication (`--replicas 0`): whether the cluster replicates at all, which a term just
   * started, whose replicator the leader side attaches at its next round, does not yet say.
   */
  readonly promoter: () => ReplicaPromoter | null;
}

/**
 * Gives shards up on purpose, with their tables where it can (DESIGN.md "Hand-over with state"):
 * at stop every led shard, and for balance one surplus shard at a time, to a member that answers.
 * A shard with an in-sync standby is handed to it (gate closed, the standby's acknowledgement of
 * the hand-over entry, the row moved in one statement fenced by the epoch, NOTIFY); one without
 * first gets one, within a deadline, while it keeps serving; failing that a stop releases it as
 * without replication. A balance move never releases a replicated shard: it keeps it whenever the
 * move fails (balance-hand-over.ts). Counts each outcome (`leasehold_cluster_hand_overs_total`).
 */
export class ShardMover {
  /** The balance move in flight, `null` when none (one at a time; a stop waits for it). */
  private moving: Promise<void> | null = null;
  /** TEST ONLY (`move-row-before-gate`): terms whose row moved while they serve on until their gates close. */
  private readonly movedEarly = new WeakSet<ShardTerm>();

  constructor(private readonly host: ShardMoverHost) {}

  /**
   * Give up every term of a stopping server. Shards with an in-sync standby end at once and are
   * handed over once `left` resolved (the member left the list, so the taker, and every server
   * hearing the NOTIFY, counts shares without it); shards without replication are released then
   * too; shards replicated but without an in-sync standby keep serving (the runtime keeps renewing them) until one is in
   * sync, within {@link STOP_SYNC_LEASES} leader leases, then are handed over, or else released.
   */
  async stopAll(stopping: readonly ShardTerm[], left: Promise<void>): Promise<void> {
    let terms = stopping;
    const reason = "this server is shutting down";
    const trySync = this.host.options.breaks?.has("stop-release-unsynced") !== true;
    const releaseWaiting = this.host.options.breaks?.has("release-waiting-at-stop") === true;
    // A standby named in sync may be gone already (stopped or killed moments ago, before its
    // leader noticed): each is asked for a fresh acknowledgement first, while the terms still
    // serve; one that does not answer is recorded not in sync, and its shard gets another standby
    // below instead of a hand-over to nobody and a release (found by pnpm sim, seed 160: a rolling
    // restart). TEST ONLY: the `stop-unconfirmed-standby` break skips it.
    if (this.host.options.breaks?.has("stop-unconfirmed-standby") !== true) {
      const asked = terms.filter((t) => canHandOver(t));
      if (asked.length > 0) {
        await Promise.all(asked.map((t) => t.replicator?.replication.confirmStandby()));
        // A term lost meanwhile (its renewal matched nothing) was given up by the runtime already.
        terms = terms.filter((t) => this.host.led(t.shard) === t);
      }
    }
    const now: ShardTerm[] = [];
    const later: ShardTerm[] = [];
    const released: ShardTerm[] = [];
    for (const term of terms) {
      // Inside its lease-wait a term has granted no lock, but transactions' immutable-timestamp
      // locks and leased timestamps (served at once): it is handed over like any other, and its
      // taker waits out the rest of the wait (the standby's snapshot carries it; found by pnpm
      // sim, seed 346: releasing it lost a transaction's lock at a SIGTERM of a protected cluster).
      if (releaseWaiting && term.waiting) released.push(term);
      else if (canHandOver(term)) now.push(term);
      else if (trySync && this.replicated(term)) later.push(term);
      else released.push(term);
    }
    for (const term of now) this.host.lose(term, "stopping", reason, true);
    for (const term of released) this.host.lose(term, "stopping", reason, false);
    // Handed over only once this member left the list: a taker that adopts a shard while the
    // stopping member is still listed ready counts it below its share and may balance a shard
    // straight back to it (its in-sync standby), a hand-over that then matches nothing once the
    // member is gone, and the shard is released with its locks (seen in the reliability suite).
    await left;
    const handingOver = now.map((term) => this.handOver(term, "sigterm"));
    const releasing = this.release(released, "sigterm");
    const moves = later.map((term) => this.syncThenHandOver(term, "sigterm", null, STOP_SYNC_LEASES, () => this.host.led(term.shard) === term, reason));
    // A balance move that already closed its term's gate finishes its hand-over (or release).
    await Promise.all([releasing, ...handingOver, ...moves, this.moving]);
  }

  /**
   * Give one surplus shard up for balance, in the background (one move at a time): to the taker
   * {@link chooseTaker} names, made its in-sync standby first (within {@link BALANCE_SYNC_LEASES}
   * leader leases, serving meanwhile), then handed over; kept (a later pass tries again) when
   * the taker does not come in sync in time or does not acknowledge the hand-over, or when no
   * member that answers is short of its share; released only when the shard is not replicated.
   */
  balance(surplus: number, share: number): void {
    if (this.moving !== null) return;
    const inSyncStandby = (t: ShardTerm): string | null => (canHandOver(t) ? (t.replicator?.replication.standby?.serverId ?? null) : null);
    const choice = chooseTaker({
      serverId: this.host.options.serverId,
      members: this.targets(),
      leases: this.host.leases(),
      led: this.host.terms().map((t) => ({ shard: t.shard, inSyncStandby: inSyncStandby(t) })),
      surplus,
    });
    const term = this.host.led(choice?.shard ?? surplus);
    if (term === null) return;
    this.moving = this.move(term, choice?.taker ?? null, `balancing: this server leads more than its share of ${share}`)
      .catch((err: unknown) => this.host.warn(err, "a balance move failed"))
      .finally(() => (this.moving = null));
  }

  /** The members a balance move may hand a shard to: those listed that answer (all listed, TEST ONLY, with `balance-to-silent-member`). */
  private targets(): readonly LiveMember[] {
    const members = this.host.members();
    if (this.host.options.breaks?.has("balance-to-silent-member") === true) return members;
    return members.filter((m) => m.serverId === this.host.options.serverId || this.host.answering(m));
  }

  private async move(term: ShardTerm, taker: string | null, reason: string): Promise<void> {
    const { host } = this;
    // Still inside its lease-wait: a taker would serve its table at once, before the earlier
    // leader's leases ran out (found by pnpm sim, seed 366). A later pass moves it.
    if (term.waiting && host.options.breaks?.has("hand-over-during-lease-wait") !== true) return;
    // Its gate closed by time: it serves nothing until a renewal confirms the row; not moved meanwhile.
    if (term.closedByTime) return;
    const serving = (): boolean => host.led(term.shard) === term && !host.stopping();
    const byRelease = !this.replicated(term) || host.options.breaks?.has("balance-by-release") === true;
    // A replicated shard is never released for balance: without a taker (the rows moved since the
    // plan), or before its replicator attached (a term just started), it stays, and a later pass
    // tries again.
    if ((taker === null || term.replicator === null) && !byRelease) return;
    let target: StandbyTarget | null = null;
    if (taker !== null && !byRelease) {
      // Where the taker listens and which process it is. Not found (the read failed, or the taker
      // is not ready by its member row yet), or it no longer answers: no move now; a later pass tries again.
      const members = await host.options.coordinator.readStandbyCandidates(2 * host.options.leaderLeaseMs);
      const member = members.find((m) => m.serverId === taker && m.ready);
      if (member === undefined || !this.targets().some((m) => m.serverId === taker)) return;
      target = { serverId: member.serverId, incarnation: member.incarnation, url: member.url };
    }
    // Not replicated: released as before (the next leader starts empty after the lease-wait).
    if (target === null) {
      if (!serving()) return;
      host.lose(term, "balance", reason, false);
      await this.release([term], "balance");
      return;
    }
    await this.syncThenHandOver(term, "balance", target, BALANCE_SYNC_LEASES, serving, reason);
  }

  /**
   * Get `term` an in-sync standby (`taker`, or any), then end it and hand it over; when none came
   * in sync a stop releases it, a balance move keeps it serving. A balance move does nothing more when the term stopped serving meanwhile (it was
   * lost, or the server began to stop: the stop gives it up).
   */
  private async syncThenHandOver(term: ShardTerm, why: HandOverReason, taker: StandbyTarget | null, leases: number, alive: () => boolean, reason: string): Promise<void> {
    const { host } = this;
    const kind: LossReason = why === "sigterm" ? "stopping" : "balance";
    const where = { shard: term.shard, epoch: term.epoch, reason: why };
    const time = host.options.time ?? realProcessClock;
    const deadline = time.now() + leases * host.options.leaderLeaseMs;
    const pollMs = Math.max(5, Math.floor(host.options.leaderLeaseMs / 60));
    const replication = term.replicator?.replication ?? (await this.attached(term, deadline, pollMs, alive));
    let standby: StandbyTarget | null = null;
    if (replication !== undefined) {
      host.options.logger.info({ ...where, taker: taker?.serverId ?? null }, "getting an in-sync standby before handing the shard over");
      standby = await syncStandby(replication, {
        taker,
        choose: () => this.chooseStandby(term.shard),
        deadlineMs: Math.max(0, deadline - time.now()),
        pollMs,
        retryMs: Math.max(10, Math.floor(host.options.leaderLeaseMs / 6)),
        alive,
        clock: replication.clock,
        unprotectedTakerSync: host.options.breaks?.has("balance-sync-unprotected") === true,
      });
    }
    // Lost meanwhile (its gate closed, a renewal matched nothing): the runtime ended it. A stopping
    // server still releases it (fenced by its epoch: harmless if another server took it already).
    if (!alive()) {
      if (why === "sigterm") await this.release([term], why);
      return;
    }
    // A balance move is voluntary: releasing would drop every lock of the shard, so it keeps
    // serving (with whatever standby the leader side attaches) and a later pass tries again.
    if (standby === null && why === "balance") {
      host.options.logger.warn(where, "the taker did not come in sync in time: keeping the shard; balance tries again later");
      return;
    }
    if (standby === null) {
      host.options.logger.warn(where, "no standby came in sync in time: releasing the shard without its table");
      host.lose(term, kind, reason, false);
      await this.release([term], why);
      return;
    }
    if (why === "balance" && host.options.breaks?.has("move-row-before-gate") === true) return this.moveRowBeforeGate(term, standby);
    if (why === "balance") return this.handOverForBalance(term, standby, reason);
    host.lose(term, kind, reason, true);
    await this.handOver(term, why);
  }

  /**
   * The balance hand-over proper (balance-hand-over.ts): gate shut reversibly, the taker's fresh
   * acknowledgement of the hand-over entry, the row moved; the term ends only once the row moved
   * (or the statement's outcome is unknown), else it serves on with its table.
   */
  private async handOverForBalance(term: ShardTerm, taker: StandbyTarget, reason: string): Promise<void> {
    const { host } = this;
    const { coordinator, serverId, leaderLeaseMs, logger, handOverPauseMs, breaks, metrics } = host.options;
    const staleAck = breaks?.has("hand-over-stale-ack") === true;
    const formerAsStandby = breaks?.has("handed-over-without-former") !== true;
    const endOnUnknown = breaks?.has("end-on-unknown-hand-over") === true;
    const unfencedRound = breaks?.has("hand-over-unfenced-round") === true;
    const context = { coordinator, serverId, incarnation: host.incarnation, leaderLeaseMs, logger, pauseMs: handOverPauseMs, staleAck, formerAsStandby, endOnUnknown, unfencedRound };
    const outcome = await balanceHandOver(term, taker, context, breaks?.has("balance-abandon-release") === true);
    const keepFormer = (epoch: number, former: FormerTable | null): boolean =>
      former !== null && host.promoter()?.keepFormerTable({ shard: term.shard, epoch, leaderId: term.leaderId, leaderIncarnation: taker.incarnation }, former.snapshot) === true;
    switch (outcome.kind) {
      case "moved": {
        const kept = keepFormer(outcome.moved.epoch, outcome.former);
        host.lose(term, "balance", reason, false);
        metrics.handOvers.inc({ reason: "balance", state: "carried" });
        const former = kept ? { serverId, incarnation: host.incarnation } : undefined;
        host.handedOver(term, { moved: outcome.moved, standby: { serverId: taker.serverId, incarnation: taker.incarnation }, former });
        return;
      }
      case "kept":
        metrics.handOvers.inc({ reason: "balance", state: "kept" });
        return;
      case "unknown":
        // The row may have moved (naming this member the new epoch's standby): keep the table for that.
        keepFormer(term.epoch + 1, outcome.former);
        host.lose(term, "balance", reason, false);
        return;
      case "no-ack":
        // TEST ONLY (balance-abandon-release): the shard released with its locks, as before issue 29.
        logger.warn({ shard: term.shard, epoch: term.epoch, taker: taker.serverId }, "TEST ONLY (balance-abandon-release): hand-over abandoned: the taker did not acknowledge; releasing the shard");
        host.lose(term, "balance", reason, false);
        await this.release([term], "balance");
        return;
      case "ended":
        return;
    }
  }

  /**
   * TEST ONLY: true for a term whose row the `move-row-before-gate` break moved while it serves:
   * its renewals match nothing, and the runtime lets it serve on until its gate closes by time.
   */
  servesUntilGate(term: ShardTerm): boolean {
    return this.movedEarly.has(term);
  }

  /**
   * TEST ONLY (`move-row-before-gate`): the hand-over's steps in the wrong order. The standby first
   * acknowledges the log so far (as in the real hand-over), then the row moves to it (the same
   * fenced statement, NOTIFY) while this term still serves; it ends only when its gate closes.
   * The taker serves at once: both serve the shard meanwhile, which a negative control shows.
   */
  private async moveRowBeforeGate(term: ShardTerm, standby: StandbyTarget): Promise<void> {
    const { coordinator, serverId, leaderLeaseMs, logger } = this.host.options;
    const replication = term.replicator?.replication;
    let cancel = (): void => undefined;
    const late = new Promise<"late">((resolve) => (cancel = (replication?.clock ?? realProcessClock).setTimer(() => resolve("late"), leaderLeaseMs)));
    if (replication !== undefined) await Promise.race([replication.whenAcked(replication.log.lastSeq), late]);
    cancel();
    this.movedEarly.add(term);
    const moved = await coordinator.handOver({ shard: term.shard, epoch: term.epoch, serverId, incarnation: this.host.incarnation }, standby, leaderLeaseMs).catch(() => null);
    if (moved === null) {
      this.movedEarly.delete(term);
      return;
    }
    this.host.options.metrics.handOvers.inc({ reason: "balance", state: "carried" });
    logger.warn(
      { shard: term.shard, epoch: term.epoch, newEpoch: moved.epoch, standby: standby.serverId },
      "TEST ONLY (move-row-before-gate): the row moved to the standby while this term still serves; it serves on until its gate closes",
    );
  }

  /** True when `term` is replicated: its replicator is attached, or the cluster replicates and the leader side attaches it at its next round. */
  private replicated(term: ShardTerm): boolean {
    return term.replicator !== null || this.host.promoter() !== null;
  }

  /**
   * The replication of `term` once the leader side attached it (a term just started gets its
   * replicator at the side's next round), `undefined` when none came by `deadline` or the term
   * stopped serving.
   */
  private async attached(term: ShardTerm, deadline: number, pollMs: number, alive: () => boolean): Promise<ShardReplication | undefined> {
    const time = this.host.options.time ?? realProcessClock;
    while (term.replicator === null && this.host.promoter() !== null && alive() && time.now() < deadline) await new Promise<void>((resolve) => time.setTimer(resolve, pollMs));
    return term.replicator?.replication;
  }

  /** A ready live member other than this one to name standby of `shard`, spread as the leader side spreads them. */
  private async chooseStandby(shard: number): Promise<StandbyTarget | null> {
    const members = await this.host.options.coordinator.readStandbyCandidates(2 * this.host.options.leaderLeaseMs);
    const chosen = chooseStandbys({ leader: this.host.options.serverId, members, leases: this.host.leases(), shards: [shard] }).get(shard);
    const member = members.find((m) => m.serverId === chosen);
    return member === undefined ? null : { serverId: member.serverId, incarnation: member.incarnation, url: member.url };
  }

  /** Hand over a term whose gate closed with its replication open; release it when that fails. */
  private async handOver(term: ShardTerm, why: HandOverReason): Promise<void> {
    const { coordinator, serverId, leaderLeaseMs, logger, handOverPauseMs, breaks } = this.host.options;
    const { incarnation } = this.host;
    const staleAck = breaks?.has("hand-over-stale-ack") === true;
    const releaseOnUnknown = breaks?.has("release-on-unknown-stop") === true;
    const done = await handOverTerm(term, { coordinator, serverId, incarnation, leaderLeaseMs, logger, reason: why, pauseMs: handOverPauseMs, staleAck, releaseOnUnknown });
    if (done === "unknown") {
      this.host.options.metrics.handOvers.inc({ reason: why, state: "unknown" });
      return;
    }
    if (done !== null) {
      this.host.options.metrics.handOvers.inc({ reason: why, state: "carried" });
      this.host.handedOver(term, done);
    } else await this.release([term], why);
  }

  /** Release terms already ended (one statement, NOTIFY), counted as given up without their tables. */
  private async release(terms: readonly ShardTerm[], why: HandOverReason): Promise<void> {
    if (terms.length === 0) return;
    const held: HeldTerm[] = terms.map((t) => ({ shard: t.shard, epoch: t.epoch }));
    this.host.options.metrics.handOvers.inc({ reason: why, state: "released" }, terms.length);
    try {
      await this.host.options.coordinator.release(this.host.options.serverId, held);
    } catch (err) {
      this.host.options.logger.warn({ err, shards: held.length, reason: why }, "could not release shards; other servers take them once their leases expire");
    }
  }
}
