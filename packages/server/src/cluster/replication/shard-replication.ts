import type { ReplicationClock } from "./replication-clock.js";
import { ReplicationLog } from "./replication-log.js";
import type { ShardReplicationView } from "./replication-metrics.js";
import type { ReplicationSender } from "./replication-sender.js";
import { openReplicationSender } from "./open-replication-sender.js";
import { sendRowUpdate, StandbyMove } from "./standby-move.js";
import { ReplicationFencedError, SyncRule, type AckOutcome } from "./sync-rule.js";
import { SyncRounds } from "./sync-rounds.js";

import type { ShardReplicationOptions, StandbyTarget } from "./shard-replication-options.js";

export type { ShardReplicationOptions, StandbyTarget };

/**
 * The replication of one term of one shard, generic over its entries (opaque JSON values): the log,
 * the rule, and at most one stream to the standby the row names. {@link attach} names a standby
 * (fenced), sends it a snapshot and then the log; the rule marks the row in sync once it holds the
 * snapshot, and not in sync (before answering) when it is late or refuses the stream.
 */
export class ShardReplication {
  readonly log: ReplicationLog<unknown>;
  readonly rule: SyncRule;
  /** The rounds of this term's standby writes (sync-rounds.ts). */
  readonly rounds = new SyncRounds();
  private target: StandbyTarget | null = null;
  private sender: ReplicationSender<unknown> | null = null;
  private attaching = false;
  private closed = false;
  private attachStartedAt = -Infinity;
  /** What the standby streamed to ({@link sender}) acknowledged. */
  private mainAcked = 0;
  /** A standby move under way ({@link moveStandby}), `null` with none. */
  private move: StandbyMove | null = null;
  /** The row names the standby an adoption kept ({@link resume}), not one this leader chose. */
  private former = false;

  /** The leader process's clock and timers (its hand-over waits run on them too). */
  readonly clock: ReplicationClock;

  constructor(private readonly options: ShardReplicationOptions) {
    const { term, clock, logger, metrics } = options;
    this.clock = clock;
    this.log = new ReplicationLog(clock);
    const where = { shard: term.shard, epoch: term.epoch };
    this.rule = new SyncRule({
      log: this.log,
      clock,
      lateMs: options.lateMs,
      unsafeAnswerFirst: options.unsafeAnswerFirst,
      markInSync: () => this.writeInSync(true),
      markNotInSync: () => this.writeInSync(false),
      onInSync: () => {
        metrics?.resyncs.inc({});
        logger.info({ ...where, standby: this.target?.serverId }, "standby in sync");
      },
      onOut: () => {
        metrics?.notInSync.inc({});
        const standby = this.target?.serverId;
        this.former = false;
        this.dropStream();
        logger.warn({ ...where, standby }, "standby recorded not in sync");
        options.onStandbyLost("not in sync");
      },
      onFenced: () => {
        this.dropStream();
        options.onFenced();
      },
      onMarkError: (err) => logger.warn({ ...where, err }, "recording the standby's sync state failed; retrying"),
    });
  }

  /** Append an entry to the log (`urgent`: an answer waits for it, see {@link ReplicationLog.append}); answers its sequence number. */
  append(entry: unknown, urgent = true): number {
    return this.log.append(entry, urgent);
  }

  /** See {@link SyncRule.whenAcked}: a grant is answered once this resolves. */
  whenAcked(seq: number): Promise<AckOutcome> {
    return this.rule.whenAcked(seq);
  }

  /**
   * `null` when an answer may reveal entry `seq` now: the standby holds it, or the row says no
   * standby is in sync and this replication is still open. Otherwise {@link whenAcked}`(seq)`. The
   * synchronous answer spares the hot path a promise when nothing is pending.
   */
  pendingAck(seq: number): Promise<AckOutcome> | null {
    if (seq <= this.log.ackedSeq || (!this.closed && this.rule.state === "out")) return null;
    return this.rule.whenAcked(seq);
  }

  /**
   * When the last {@link attach} began (the replication clock): the target's incarnation was read
   * before it, so a member list sent after it is at least as new as that incarnation.
   */
  get attachedAt(): number {
    return this.attachStartedAt;
  }

  /** The standby streamed to now, `null` with none. */
  get standby(): StandbyTarget | null {
    return this.target;
  }

  /**
   * Name `target` as the standby (one fenced write, `in_sync` false), then send it a snapshot and
   * the log. Only while the rule is `out` and nothing else attaches. Answers true once the stream
   * started; false when it could not (the write failed or matched nothing, or the state changed).
   */
  async attach(target: StandbyTarget): Promise<boolean> {
    if (this.closed || this.attaching || this.rule.state !== "out") return false;
    this.attaching = true;
    this.attachStartedAt = this.options.clock.now();
    try {
      let named: boolean;
      try {
        named = await this.rounds.write((round) => this.options.coordinator.nameStandby(this.options.term, target, round));
      } catch (err) {
        this.options.logger.warn({ shard: this.options.term.shard, standby: target.serverId, err }, "naming a standby failed; will try again");
        return false;
      }
      if (this.closed || this.rule.state !== "out") return false;
      if (!named) {
        this.rule.close(new ReplicationFencedError("naming a standby matched nothing: another server leads the shard now"));
        this.options.onFenced();
        return false;
      }
      this.target = target;
      // The snapshot first, then the log's position, in the same turn: what the snapshot's own
      // catch-up appended is in the image and before the position; nothing comes in between.
      let seq: number, payload: unknown;
      if (this.options.unsafeSnapshotAfterPosition === true) {
        seq = this.log.startRetaining();
        payload = this.options.snapshot();
      } else {
        payload = this.options.snapshot();
        seq = this.log.startRetaining();
      }
      this.rule.beginJoin(seq);
      this.startStream(target, seq, payload);
      return true;
    } finally {
      this.attaching = false;
    }
  }

  /**
   * The row already names `target` in sync for this very term (an adoption left a balance move's
   * former leader named: it holds the table as handed over, as a replica of this epoch): stream to
   * it without naming it again, which would record `in_sync = false` and leave the shard
   * unprotected while it holds every lock. Synchronous, before the term answers anything: from now
   * on every grant waits for its acknowledgement (the snapshot sent first replaces its table), and
   * if it is late or refuses the stream, `in_sync = false` is recorded before anything is answered
   * without it, as for any standby. `null` (it cannot be reached): recorded not in sync at once.
   * Only from `out`, before anything attached.
   */
  resume(target: StandbyTarget | null): void {
    if (this.closed || this.attaching || this.rule.state !== "out" || this.target !== null) return;
    this.attachStartedAt = this.options.clock.now();
    this.target = target;
    const payload = this.options.snapshot();
    const seq = this.log.startRetaining();
    this.rule.beginJoin(seq);
    if (target === null) return this.rule.standbyLost();
    this.former = true;
    this.startStream(target, seq, payload);
  }

  /**
   * True while the row names the standby an adoption kept in sync ({@link resume}: a balance
   * move's former leader), which this leader did not choose: the leader side moves it to the
   * member standbys spread best to ({@link moveStandby}), or settles for it ({@link keepFormer}).
   */
  get keptFormer(): boolean {
    return this.former && this.rule.state === "in-sync";
  }

  /** The standby the adoption kept stays (it is where standbys spread best to). */
  keepFormer(): void {
    this.former = false;
  }

  /** True while a standby move is under way ({@link moveStandby}). */
  get moving(): boolean {
    return this.move !== null;
  }

  /**
   * Move the in-sync standby to `to` without a moment unprotected, as {@link StandbyMove} tells:
   * `to` gets a snapshot and the log while the standby the row names keeps following it (grants
   * wait for both), the row names `to` only once it holds the snapshot, and the first standby is
   * dropped only once that write is known to have matched. Only from `in-sync`. Answers `"moved"`,
   * `"kept"` (nothing moved, or the rule let go of both), or `"fenced"` (deposed).
   */
  async moveStandby(to: StandbyTarget): Promise<"moved" | "kept" | "fenced"> {
    const from = this.target;
    const { coordinator } = this.options;
    if (this.closed || this.attaching || this.move !== null || from === null || this.sender === null || this.rule.state !== "in-sync" || coordinator.moveStandby === undefined) return "kept";
    if (from.serverId === to.serverId && from.incarnation === to.incarnation) return "kept";
    const { term, clock, lateMs, logger } = this.options;
    const where = { shard: term.shard, epoch: term.epoch, from: from.serverId, to: to.serverId };
    // The log retains entries (in sync): the snapshot, then its position, in the same turn.
    const payload = this.options.snapshot();
    const seq = this.log.lastSeq;
    const move = new StandbyMove({ to, snapshotSeq: seq, log: this.log, clock, lateMs });
    this.move = move;
    const sender = this.openSender(to, seq, payload, () => (this.sender === sender || move.inDoubt ? this.rule.standbyLost() : this.endMove(move)));
    move.sender = sender;
    move.start();
    sender.start();
    if (!(await move.caughtUp()) || this.move !== move || this.rule.state !== "in-sync") {
      this.endMove(move);
      logger.info(where, "standby move given up: the new standby did not keep up; the standby stays");
      return "kept";
    }
    const outcome = await sendRowUpdate(move, {
      write: () => this.rounds.write((round) => coordinator.moveStandby!(term, from, to, round)),
      current: () => this.move === move && this.rule.state === "in-sync",
      clock,
      retryMs: Math.max(1, Math.floor(lateMs / 10)),
      onUnknown: (err) => logger.warn({ ...where, err }, "naming the new standby failed, its outcome unknown: waiting on both standbys, sending it again"),
      unknownAsFailed: this.options.unsafeUnknownMoveAsFailed,
    });
    if (outcome === "unknown") {
      this.endMove(move);
      return "kept";
    }
    // "let-go": the rule let go of both standbys (or is recording so): its write decides the row.
    if (outcome === "let-go") return "kept";
    if (outcome === "fenced") {
      this.rule.close(new ReplicationFencedError("moving the standby matched nothing: another server leads the shard now"));
      this.dropStream();
      this.options.onFenced();
      return "fenced";
    }
    const old = this.sender;
    this.sender = sender;
    this.target = to;
    this.mainAcked = move.acked;
    this.move = null;
    this.former = false;
    move.end();
    void old?.stop();
    this.acknowledged();
    logger.info(where, "standby moved");
    return "moved";
  }

  /**
   * Before a hand-over: a standby move not yet sent to the database is given up; one whose row
   * update is in doubt is waited out (the row then names one standby for sure, {@link standby}).
   */
  async settleMove(): Promise<void> {
    const move = this.move;
    if (move === null) return;
    if (!move.inDoubt) return this.endMove(move);
    await move.finished();
  }

  /**
   * Write the row's sync state again, unchanged, under a fresh round: a write that matched fences
   * every statement of an earlier round for good (a balance hand-over's row move whose outcome is
   * unknown, balance-hand-over.ts). Only while no other write of this term's rounds awaits its
   * answer, no standby is being named or moved, and the rule is `in-sync` or `out`: the row then
   * says just what the rule last recorded. Answers false without writing otherwise; true when it
   * matched. Rejects when its outcome is unknown.
   */
  async restateSync(): Promise<boolean> {
    const state = this.rule.state;
    if (this.closed || this.rounds.writing || this.attaching || this.move !== null || (state !== "in-sync" && state !== "out")) return false;
    return this.writeInSync(state === "in-sync");
  }

  /** Record `in_sync` for the current standby under a fresh round (`Coordinator.setInSync`). */
  private writeInSync(inSync: boolean): Promise<boolean> {
    const { coordinator, term } = this.options;
    return this.rounds.write((round) => coordinator.setInSync(term, this.target?.incarnation ?? "", inSync, round));
  }

  /**
   * Stop counting on the current standby (a balance move wants another member as standby): the
   * rule records `in_sync = false` before it answers anything without it, exactly as for a late
   * standby, and the stream is dropped; {@link attach} can then name another. Nothing happens
   * unless a standby is joining or in sync.
   */
  dropStandby(): void {
    this.rule.standbyLost();
  }

  /**
   * Check that the standby still answers (every third of the leader lease, leader-side.ts): the
   * stream asks it for an acknowledgement when idle, and a standby that has left a message
   * unanswered for the rule's lateness bound is treated as late now, exactly as a late grant's
   * (`in_sync = false` recorded, then another standby attached). Without it a standby that died
   * on an idle shard stays named in sync, and the server reports itself protected while a crash
   * of it would lose the shard's table. A joining standby gets a whole leader lease (its snapshot
   * may be large), after which it is given up likewise: one that died before it held the snapshot
   * would otherwise keep the shard joining, never in sync, for good.
   */
  probe(): void {
    this.move?.probe(() => this.rule.standbyLost());
    const sender = this.sender;
    const state = this.rule.state;
    if (sender === null || (state !== "in-sync" && state !== "joining")) return;
    const bound = state === "in-sync" ? this.options.lateMs : 3 * this.options.lateMs;
    if (sender.unansweredForMs() >= bound) return this.rule.standbyLost();
    sender.probe();
  }

  /**
   * Confirm that the in-sync standby still answers, before a stop hands the shard to it: ask it for
   * an acknowledgement ({@link ReplicationSender.probe}) and wait, up to the rule's lateness bound,
   * for an answer that arrives after this call (to it, or to a message already in flight). Answers true once one came. When none comes the
   * standby is treated as late now (`in_sync = false` recorded, as for a late grant) and the answer
   * is false: the stop then gets the shard another standby within its deadline instead of handing
   * it to one that is gone (a standby stopped moments ago stays named in sync until its leader
   * notices, up to two thirds of a leader lease on an idle shard). False at once when no standby is in sync.
   */
  async confirmStandby(): Promise<boolean> {
    const sender = this.sender;
    if (sender === null || this.rule.state !== "in-sync") return false;
    const { clock, lateMs } = this.options;
    const asked = clock.now();
    const heard = sender.answers;
    sender.probe();
    const pollMs = Math.max(1, Math.floor(lateMs / 20));
    while (this.sender === sender && this.rule.state === "in-sync" && sender.answers === heard) {
      if (clock.now() - asked >= lateMs) {
        this.rule.standbyLost();
        return false;
      }
      await new Promise<void>((resolve) => clock.setTimer(resolve, pollMs));
    }
    return this.sender === sender && this.rule.state === "in-sync";
  }

  /** What the metrics read. */
  view(): ShardReplicationView {
    const lag = this.log.lag();
    return { lagEntries: lag.entries, lagMs: lag.ms, inSync: this.rule.state === "in-sync" };
  }

  /** End: the stream stops, waiting grants are rejected with `error`. Idempotent. */
  close(error: Error): void {
    if (this.closed) return;
    this.closed = true;
    this.rule.close(error);
    this.dropStream();
  }

  private startStream(target: StandbyTarget, seq: number, payload: unknown): void {
    const sender = this.openSender(target, seq, payload, () => {
      // It will acknowledge nothing more: record not-in-sync now rather than at the deadline.
      if (this.sender === sender) this.rule.standbyLost();
    });
    this.sender = sender;
    sender.start();
  }

  /** The log acknowledged up to what every standby streamed to holds (both during a move). */
  private acknowledged(): void {
    const move = this.move;
    const held = move === null ? this.mainAcked : Math.min(this.mainAcked, move.holds);
    if (held > this.log.ackedSeq) this.log.acknowledge(held);
  }

  private senderAcked(sender: ReplicationSender<unknown>, seq: number): void {
    if (sender === this.sender) this.mainAcked = Math.max(this.mainAcked, seq);
    else if (this.move !== null && sender === this.move.sender) this.move.acknowledged(seq);
    else return;
    this.acknowledged();
  }

  private endMove(move: StandbyMove): void {
    if (this.move !== move) return;
    this.move = null;
    move.end();
    void move.sender?.stop();
    this.acknowledged();
  }

  private openSender(target: StandbyTarget, seq: number, payload: unknown, refused: () => void): ReplicationSender<unknown> {
    const { options } = this;
    const sender: ReplicationSender<unknown> = openReplicationSender(options, this.log, target, { seq, payload }, {
      acknowledge: (acked) => this.senderAcked(sender, acked),
      streamAcked: (acked) => this.sender === sender && this.rule.streamAcked(acked),
      refused,
    });
    return sender;
  }

  private dropStream(): void {
    const sender = this.sender;
    this.sender = null;
    void sender?.stop();
    const move = this.move;
    if (move !== null) this.endMove(move);
  }
}
