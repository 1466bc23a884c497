import type { ReplicationClock } from "./replication-clock.js";
import type { ReplicationLog } from "./replication-log.js";

/**
 * Where a shard's standby stands, as far as the rule is concerned:
 * - `out`: the row says not in sync (recorded), or no standby: grants are answered at once.
 * - `joining`: a standby was sent a snapshot; grants wait for its acknowledgement; once it holds
 *   the snapshot, `in_sync = true` is recorded.
 * - `in-sync`: grants wait for the standby's acknowledgement.
 * - `marking-out`: the standby was late; `in_sync = false` is being recorded: nothing is answered
 *   until it is (the rule).
 * - `fenced`: a write matched nothing: this leader was deposed; every waiter was rejected.
 */
export type SyncState = "out" | "joining" | "in-sync" | "marking-out" | "fenced";

/** How a wait for an acknowledgement ended: the standby holds it, or the row no longer claims it does. */
export type AckOutcome = "acked" | "unreplicated";

/** What a {@link SyncRule} is made with. */
export interface SyncRuleOptions {
  readonly log: ReplicationLog<unknown>;
  readonly clock: ReplicationClock;
  /**
   * How long an entry may wait for its acknowledgement before the standby counts as late: a third
   * of the leader lease (DESIGN.md), so a grant is delayed at most that long by a dead standby.
   */
  readonly lateMs: number;
  /**
   * Record `in_sync = false` in the shard's row, fenced by the leader's epoch: true when recorded,
   * false when it matched nothing (deposed); a rejection is an unknown outcome, retried.
   */
  readonly markNotInSync: () => Promise<boolean>;
  /** Record `in_sync = true` (fenced likewise, and by the standby's incarnation). Same answers. */
  readonly markInSync: () => Promise<boolean>;
  /** Pause before retrying a mark whose outcome is unknown. Default: a tenth of `lateMs`. */
  readonly retryMs?: number | undefined;
  /** The row says not in sync now: drop the stream; re-sync when a standby can be had. Default: nothing. */
  readonly onOut?: (() => void) | undefined;
  /** A mark matched nothing: the term is over. Default: nothing. */
  readonly onFenced?: (() => void) | undefined;
  /** The row says in sync now. Default: nothing. */
  readonly onInSync?: (() => void) | undefined;
  /** Hears each mark that failed (its outcome unknown; it is retried). Default: nothing. */
  readonly onMarkError?: ((err: unknown) => void) | undefined;
  /**
   * TEST ONLY: answer late waiters *before* recording `in_sync = false` (the rule reversed), so the
   * negative control can show the rule's check fires. Default false.
   */
  readonly unsafeAnswerFirst?: boolean | undefined;
}

interface Waiter {
  /** Raised while the waiter's entries are not flushed yet (see {@link SyncRule.whenAcked}). */
  seq: number;
  readonly promise: Promise<AckOutcome>;
  readonly resolve: (outcome: AckOutcome) => void;
  readonly reject: (err: Error) => void;
}

const FENCED = "this leader's replication write matched nothing: another server leads the shard now";

/** Raised to grants waiting when this leader's mark matched nothing. */
export class ReplicationFencedError extends Error {
  override name = "ReplicationFencedError";
}

/**
 * The rule of DESIGN.md "Locks that outlive their leader", for one shard's term: while the row says
 * in sync, a grant is answered only after the standby acknowledged its entry; when the standby is
 * late (its oldest unacknowledged entry older than {@link SyncRuleOptions.lateMs}), the leader
 * first records `in_sync = false` and only then answers the waiting grants; `in_sync = true` is
 * recorded again only once a standby acknowledged a snapshot (and, since grants wait while it
 * joins, everything answered after it). So a standby the row names in sync holds every grant a
 * client was told about.
 */
export class SyncRule {
  private current: SyncState = "out";
  private waiters: Waiter[] = [];
  private joinSeq = 0;
  /** What the current stream's standby acknowledged (-1: nothing yet, not even its snapshot). */
  private streamSeq = -1;
  private markingIn = false;
  private cancelTimer: (() => void) | null = null;
  private timerAt = Infinity;
  private closedWith: Error | null = null;

  constructor(private readonly options: SyncRuleOptions) {
    options.log.onAck(() => this.acked());
    options.log.onFlush(() => this.arm());
  }

  /** The current state. */
  get state(): SyncState {
    return this.current;
  }

  /**
   * Resolves once the standby holds entry `seq` (`"acked"`), or once the row records that no
   * standby is in sync (`"unreplicated"`, answered at once in `out`). Rejects with a
   * {@link ReplicationFencedError} when this leader was deposed, or with the close error.
   */
  whenAcked(seq: number): Promise<AckOutcome> {
    if (this.closedWith !== null) return Promise.reject(this.closedWith);
    if (this.current === "fenced") return Promise.reject(new ReplicationFencedError(FENCED));
    const log = this.options.log;
    if (seq <= log.ackedSeq) return Promise.resolve("acked");
    if (this.current === "out") return Promise.resolve("unreplicated");
    log.expedite(seq);
    // One hold per turn, not one per grant: entries not flushed yet all leave in this turn's
    // message, so a wait for the last of them costs the earlier ones nothing, and waiting for a
    // later entry than asked is never unsafe.
    const last = this.waiters[this.waiters.length - 1];
    if (last !== undefined && last.seq > log.flushedSeq && seq > log.flushedSeq) {
      if (seq > last.seq) last.seq = seq;
      return last.promise;
    }
    let settle: Pick<Waiter, "resolve" | "reject"> | null = null;
    const promise = new Promise<AckOutcome>((resolve, reject) => (settle = { resolve, reject }));
    this.waiters.push({ seq, promise, ...settle! });
    this.arm();
    return promise;
  }

  /**
   * A stream with a snapshot at `snapshotSeq` (every entry up to it) has started to a standby:
   * grants wait for its acknowledgements from now on, and once it holds the snapshot the row is
   * marked in sync. Only from `out`.
   */
  beginJoin(snapshotSeq: number): void {
    if (this.current !== "out") throw new Error(`beginJoin in state ${this.current}`);
    this.current = "joining";
    this.joinSeq = snapshotSeq;
    this.streamSeq = -1;
    this.acked();
  }

  /**
   * The current stream's standby acknowledged everything up to `seq` (its snapshot first). Only
   * this counts towards recording in sync: the log's own acknowledgement may come from an earlier
   * standby, which says nothing of this one.
   */
  streamAcked(seq: number): void {
    if (seq <= this.streamSeq) return;
    this.streamSeq = seq;
    this.acked();
  }

  /**
   * The standby will acknowledge nothing more (it refused the stream): treat it as late now, rather
   * than at the deadline. Nothing happens outside `joining` and `in-sync`.
   */
  standbyLost(): void {
    void this.late();
  }

  /** Stop: timers cancelled, waiters rejected with `error`. Idempotent. */
  close(error: Error): void {
    if (this.closedWith !== null) return;
    this.closedWith = error;
    this.disarm();
    this.rejectAll(error);
  }

  private acked(): void {
    const acked = this.options.log.ackedSeq;
    if (this.waiters.some((w) => w.seq <= acked)) {
      const done = this.waiters.filter((w) => w.seq <= acked);
      this.waiters = this.waiters.filter((w) => w.seq > acked);
      for (const w of done) w.resolve("acked");
    }
    if (this.current === "joining" && !this.markingIn && this.streamSeq >= this.joinSeq) void this.recordInSync();
    this.arm();
  }

  private async recordInSync(): Promise<void> {
    this.markingIn = true;
    let recorded: boolean | "unknown";
    try {
      recorded = await this.options.markInSync();
    } catch (err) {
      this.options.onMarkError?.(err);
      recorded = "unknown";
    }
    this.markingIn = false;
    // Went late meanwhile: the later not-in-sync write (a later round) decides the row.
    if (this.current !== "joining" || this.closedWith !== null) return;
    if (recorded === true) {
      this.current = "in-sync";
      this.options.onInSync?.();
    } else if (recorded === false) this.fence();
    else this.options.clock.setTimer(() => this.acked(), this.retryMs);
  }

  private get retryMs(): number {
    return this.options.retryMs ?? Math.max(1, Math.floor(this.options.lateMs / 10));
  }

  /** Arm the watchdog for the oldest unacknowledged entry, while grants wait on acknowledgements. */
  private arm(): void {
    if (this.closedWith !== null || (this.current !== "joining" && this.current !== "in-sync")) return this.disarm();
    const oldest = this.options.log.oldestUnackedAt();
    if (oldest === null) return this.disarm();
    const at = oldest + this.options.lateMs;
    if (at >= this.timerAt) return;
    this.disarm();
    this.timerAt = at;
    this.cancelTimer = this.options.clock.setTimer(() => {
      this.cancelTimer = null;
      this.timerAt = Infinity;
      const still = this.options.log.oldestUnackedAt();
      if (still !== null && this.options.clock.now() - still >= this.options.lateMs) void this.late();
      else this.arm();
    }, at - this.options.clock.now());
  }

  private disarm(): void {
    this.cancelTimer?.();
    this.cancelTimer = null;
    this.timerAt = Infinity;
  }

  /** The standby is late: record not-in-sync, then (only then) answer the waiting grants. */
  private async late(): Promise<void> {
    if (this.current !== "joining" && this.current !== "in-sync") return;
    this.current = "marking-out";
    this.disarm();
    if (this.options.unsafeAnswerFirst === true) this.resolveAll("unreplicated");
    for (;;) {
      let recorded: boolean;
      try {
        recorded = await this.options.markNotInSync();
      } catch (err) {
        this.options.onMarkError?.(err);
        if (this.closedWith !== null) return;
        await new Promise<void>((resolve) => this.options.clock.setTimer(resolve, this.retryMs));
        if (this.closedWith !== null) return;
        continue;
      }
      if (this.closedWith !== null) return;
      if (!recorded) return this.fence();
      break;
    }
    this.current = "out";
    this.options.log.stopRetaining();
    this.resolveAll("unreplicated");
    this.options.onOut?.();
  }

  private fence(): void {
    this.current = "fenced";
    this.disarm();
    this.rejectAll(new ReplicationFencedError(FENCED));
    this.options.onFenced?.();
  }

  private resolveAll(outcome: AckOutcome): void {
    const all = this.waiters;
    this.waiters = [];
    for (const w of all) w.resolve(outcome);
  }

  private rejectAll(error: Error): void {
    const all = this.waiters;
    this.waiters = [];
    for (const w of all) w.reject(error);
  }
}
