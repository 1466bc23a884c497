import type { ReplicationClock } from "./replication-clock.js";
import type { ReplicationLog } from "./replication-log.js";
import type { ReplicationSender } from "./replication-sender.js";
import type { StandbyTarget } from "./shard-replication-options.js";

/** What a {@link StandbyMove} is made with. */
export interface StandbyMoveOptions {
  /** The member the in-sync standby moves to. */
  readonly to: StandbyTarget;
  /** The log position of the snapshot it was sent (it holds every entry up to it once it acknowledged it). */
  readonly snapshotSeq: number;
  readonly log: ReplicationLog<unknown>;
  readonly clock: ReplicationClock;
  /** The rule's lateness bound (a third of the leader lease): see {@link StandbyMove}. */
  readonly lateMs: number;
}

/**
 * A standby move (`ShardReplication.moveStandby`): the in-sync standby the row names moves to
 * another member without a moment when no standby holding every grant answered is named in sync
 * (DESIGN.md: standbys spread evenly; a balance taker moves the former leader its adoption kept):
 * 1. the new standby is sent a snapshot and then the log while the one the row names keeps
 *    following it; from the snapshot's position on, grants wait for both acknowledgements;
 * 2. once the new one acknowledged its snapshot, one statement fenced by the term (and by the row
 *    naming either standby in sync) names it in sync (`Coordinator.moveStandby`, {@link sendRowUpdate});
 *    an unknown outcome is sent again, waiting on both, while the rule is in sync;
 * 3. once it matched, the first standby's stream is dropped.
 * A crash of the leader at any step leaves the row naming a standby that holds every grant.
 *
 * This class is the second standby's side while the row still names the first: what it
 * acknowledged, and when to give it up. Until the row update is sent it
 * may be given up at any time (nothing names it): when it has not acknowledged its snapshot within
 * three lateness bounds (a joining standby's allowance), or has kept an entry waiting for half of
 * one, well before the rule's own watchdog (the whole bound, over what both hold) would record the
 * shard not in sync because of it. Once the row update is sent it is never given up here: the row
 * may name it, so only the rule (recording not in sync first) lets go of it.
 */
export class StandbyMove {
  /** The stream to the second standby, once started. */
  sender: ReplicationSender<unknown> | null = null;
  private ackedSeq = -1;
  private updateSent = false;
  private over = false;
  private readonly startedAt: number;
  private cancelTimer: (() => void) | null = null;
  private readonly caughtUpWaiters: ((caughtUp: boolean) => void)[] = [];
  private readonly overWaiters: (() => void)[] = [];

  constructor(private readonly options: StandbyMoveOptions) {
    this.startedAt = options.clock.now();
  }

  /** The member moved to. */
  get to(): StandbyTarget {
    return this.options.to;
  }

  /**
   * What the second standby counts as holding for the log's acknowledgement: the snapshot's
   * position until it acknowledged more. Entries up to it were answered on the first standby's
   * acknowledgement alone; the row update is sent only once the snapshot (which holds them) was
   * acknowledged, so every grant answered before it is held by the second standby too.
   */
  get holds(): number {
    return Math.max(this.ackedSeq, this.options.snapshotSeq);
  }

  /** What the second standby acknowledged (cumulative; -1: nothing, not even its snapshot). */
  get acked(): number {
    return this.ackedSeq;
  }

  /** True once the row update was sent and until the move is over: the row may name either standby. */
  get inDoubt(): boolean {
    return this.updateSent && !this.over;
  }

  /** True once over (moved, given up, or the replication dropped both streams). */
  get isOver(): boolean {
    return this.over;
  }

  /**
   * Every third of the leader lease (`ShardReplication.probe`): ask the second standby for an
   * acknowledgement; once the row update is sent, one that left a message unanswered for the
   * lateness bound is the rule's to record not in sync (`onLate`), as for the standby the row names.
   */
  probe(onLate: () => void): void {
    const sender = this.sender;
    if (sender === null || this.over) return;
    if (this.inDoubt && sender.unansweredForMs() >= this.options.lateMs) return onLate();
    sender.probe();
  }

  /** Begin watching the second standby's lateness (until the row update is sent). */
  start(): void {
    const everyMs = Math.max(1, Math.floor(this.options.lateMs / 8));
    const check = (): void => {
      this.cancelTimer = null;
      if (this.over || this.updateSent) return;
      if (this.late()) return this.end();
      this.cancelTimer = this.options.clock.setTimer(check, everyMs);
    };
    this.cancelTimer = this.options.clock.setTimer(check, everyMs);
  }

  /** The second standby acknowledged everything up to `seq`. */
  acknowledged(seq: number): void {
    if (seq <= this.ackedSeq) return;
    this.ackedSeq = seq;
    if (seq >= this.options.snapshotSeq) this.settleCaughtUp(true);
  }

  /** Resolves true once the second standby acknowledged its snapshot, false once the move is over first. */
  caughtUp(): Promise<boolean> {
    if (this.over) return Promise.resolve(false);
    if (this.ackedSeq >= this.options.snapshotSeq) return Promise.resolve(true);
    return new Promise((resolve) => this.caughtUpWaiters.push(resolve));
  }

  /** The row update is about to be sent: from now on the move is not given up here. */
  sendingRowUpdate(): void {
    this.updateSent = true;
    this.cancelTimer?.();
    this.cancelTimer = null;
  }

  /** Resolves once the move is over. */
  finished(): Promise<void> {
    if (this.over) return Promise.resolve();
    return new Promise((resolve) => this.overWaiters.push(resolve));
  }

  /** Over: the watchdog stops and every waiter hears. The stream is the caller's (it may become the main one). Idempotent. */
  end(): void {
    if (this.over) return;
    this.over = true;
    this.cancelTimer?.();
    this.cancelTimer = null;
    this.settleCaughtUp(false);
    for (const w of this.overWaiters.splice(0)) w();
  }

  private late(): boolean {
    const { clock, lateMs, log } = this.options;
    const now = clock.now();
    if (this.ackedSeq < this.options.snapshotSeq && now - this.startedAt >= 3 * lateMs) return true;
    const oldest = log.oldestAfter(this.holds);
    return oldest !== null && now - oldest >= lateMs / 2;
  }

  private settleCaughtUp(caughtUp: boolean): void {
    for (const w of this.caughtUpWaiters.splice(0)) w(caughtUp);
  }
}

/** What {@link sendRowUpdate} needs. */
export interface RowUpdateOptions {
  /** The statement naming the new standby in sync, under a fresh round each time. */
  readonly write: () => Promise<boolean>;
  /** True while the move is still on and the rule in sync: only then is the statement sent. */
  readonly current: () => boolean;
  readonly clock: ReplicationClock;
  /** Pause before sending it again after an unknown outcome. */
  readonly retryMs: number;
  /** Hears each unknown outcome. */
  readonly onUnknown: (err: unknown) => void;
  /** TEST ONLY (`move-unknown-as-failed`): an unknown outcome answers `"unknown"` at once. Default false. */
  readonly unknownAsFailed?: boolean | undefined;
}

/**
 * Step 2 of a {@link StandbyMove}: send the row update until its outcome is known. It is sent only
 * while `current()` (the rule in sync), so a not-in-sync write the rule starts later carries a later
 * round than every update sent, and wins whatever order they land in. Answers `"matched"`,
 * `"fenced"` (it matched nothing: the row is no longer this term's), or `"let-go"` (the move ended,
 * or the rule left `in-sync`, before an outcome was known: the rule's write decides the row).
 */
export async function sendRowUpdate(move: StandbyMove, options: RowUpdateOptions): Promise<"matched" | "fenced" | "let-go" | "unknown"> {
  move.sendingRowUpdate();
  while (options.current()) {
    let matched: boolean;
    try {
      matched = await options.write();
    } catch (err) {
      if (!options.current()) break;
      options.onUnknown(err);
      if (options.unknownAsFailed === true) return "unknown";
      await new Promise<void>((resolve) => options.clock.setTimer(resolve, options.retryMs));
      continue;
    }
    if (!options.current()) break;
    return matched ? "matched" : "fenced";
  }
  return "let-go";
}
