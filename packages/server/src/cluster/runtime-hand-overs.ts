import { adoptBeforeStop } from "./replication/adopt-before-stop.js";
import type { AdoptAfterAck } from "./replication/adopt-after-ack.js";
import { unavailable } from "./cluster-errors.js";
import { ClusterPasses } from "./cluster-passes.js";
import type { LossReason } from "./cluster-metrics.js";
import type { ShardLease } from "./coordinator.js";
import type { HealthProber } from "./health-prober.js";
import type { JoinRetry } from "./join-retry.js";
import type { LeaseRenewer } from "./lease-renewer.js";
import type { PromotionCandidate } from "./replication/promote-replica.js";
import type { HandOverDone } from "./replication/hand-over.js";
import { logServeInterval } from "./serve-interval.js";
import type { ShardTerm } from "./shard-term.js";

/**
 * How a {@link ClusterRuntime} gives shards up and takes them handed over: its stop (adopt what
 * was handed to it, leave the member list, hand every led shard to its standby or release it), a
 * term lost or failed, and the adoption of a row handed over to this member (on its `NOTIFY`, on
 * a timer once its replica acknowledged the hand-over entry, or by a pass). The pass loop is in
 * cluster-passes.ts, joining and the wiring in cluster-runtime.ts.
 */
export abstract class RuntimeHandOvers extends ClusterPasses {
  /** The join's retries (join-retry.ts), `null` before {@link ClusterRuntime.join}. */
  protected joining: JoinRetry | null = null;
  /** Hears every term that ended (the service folds its counters into its totals). */
  onTermEnded: (term: ShardTerm) => void = () => undefined;
  /** True while a stop adopts the rows handed over to this member first (see {@link stop}). */
  private adoptingBeforeStop = false;
  /** Renews the led shards and heartbeats (lease-renewer.ts). */
  protected abstract readonly renewer: LeaseRenewer;
  /** Probes the listed members' health (for {@link ClusterPasses.answering}). */
  protected abstract readonly prober: HealthProber;
  /** Adopts a row handed over to this member on its own once it acknowledged the hand-over entry (see {@link handOverAcknowledged}). */
  protected abstract readonly afterAck: AdoptAfterAck;

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

  /** End `term` (its shard is no longer led here) for `reason`, kept as handing over when `handingOver`; log and count it. */
  protected lose(term: ShardTerm, kind: LossReason, reason: string, handingOver = false): void {
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
  protected noteHandedOver(term: ShardTerm, done: HandOverDone): void {
    const row = this.leases[term.shard];
    if (row === undefined || row.epoch >= done.moved.epoch) return;
    const { standby, moved, former } = done;
    const named = { standbyId: former?.serverId ?? null, standbyIncarnation: former?.incarnation ?? null, inSync: former !== undefined };
    this.leases[term.shard] = { ...row, holder: standby.serverId, incarnation: standby.incarnation, url: moved.url, leaderId: term.leaderId, epoch: moved.epoch, expired: false, ...named };
  }

  /**
   * A NOTIFY of `shard`: when this member holds a replica of it, it may be the hand-over of it to
   * this standby; the fenced adoption is tried at once, alongside the pass (which may be busy, and
   * reads every row first), so the taker serves a statement and a pass sooner (term-starter.ts).
   * Answers whether it adopted the row (`null`: nothing tried; see `TermStarter.adoptOnNotify`).
   */
  protected override adoptNotified(shard: number): Promise<boolean | null> {
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
  protected awaitsHandOver(shard: number): boolean {
    return (this.terms[shard] ?? null) === null && this.promoter?.awaitsHandOver(shard) === true;
  }

  /** A row handed over to this standby: start its term with the replica once the fenced adoption wrote the row. */
  protected override adopt(row: ShardLease, candidate: PromotionCandidate): Promise<void> {
    this.tookAt = this.clock();
    this.options.logger.debug({ shard: row.shard, epoch: row.epoch }, "adopting a handed-over shard");
    return this.starter.adopt(row, candidate);
  }
}
