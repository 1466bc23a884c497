import type { LeaseholdError } from "@leasehold/protocol";
import type { ServingGate } from "../engine/serving-gate.js";
import { TAKING_OVER_RETRY_AFTER_MS, unavailable } from "./cluster-errors.js";
import { realProcessClock, type ProcessClock } from "./process-clock.js";
import type { GateDeadline, ShardTermOptions } from "./shard-term-options.js";

/**
 * The serving gate of a `ShardTerm` (the engine's {@link ServingGate}): open while the term
 * lives, its carried bounds are loaded, no balance hand-over has it shut, and its last renewal is
 * recent enough on both clocks ({@link GateDeadline}); its timer closes it by time, a renewal
 * ({@link extendGate}) moves the deadline and reopens it. The term itself (`ShardTerm`) holds
 * the table and decides what a closure by time does ({@link closeByTime}).
 */
export abstract class TermGate implements ServingGate {
  /** The shard this term leads. */
  readonly shard: number;
  /** The epoch of the shard's row this term holds (its fence). */
  readonly epoch: number;
  /** The id of this term's lock table: its tokens and leases carry it. */
  readonly leaderId: string;
  /** Monotonic times of the first and last operation served (for the serve-interval log). */
  firstServedAt = -1;
  /** See {@link firstServedAt}. */
  lastServedAt = -1;
  private gateUntil: GateDeadline;
  /** Cancels the timer that closes the gate when its deadline passes. */
  protected cancelGateTimer: (() => void) | null = null;
  /** True from the gate's closure by time until a renewal reopens it ({@link closedByTime}). */
  protected gateClosed = false;
  /** Sets a timer on the term's monotonic clock (`ShardTermOptions.setTimer`). */
  protected readonly setTimer: ProcessClock["setTimer"];
  /**
   * Carried namespaces whose timestamp bound is still loading. Until none is, the engine's gate
   * stays shut (nothing is served, no waiter is granted or timed out): a grant hands out a
   * fencing number, which needs the namespace's bound, and a waiter granted from a timer (a lapse
   * or a timeout ahead of it) has nobody to answer a refusal to.
   */
  protected loadingCarried = 0;
  /**
   * True while a balance hand-over waits for its taker's acknowledgement of the hand-over entry
   * and for the row to move (`ShardTerm.pauseForHandOver`): the engine's gate is shut, as while
   * carried bounds load, so nothing is served, granted, timed out or lapsed meanwhile, and the
   * table stays exactly what the taker acknowledged; unlike `ShardTerm.end`, it can reopen.
   */
  protected paused = false;
  /** The error the term ended with, `null` while it lives (see `ShardTerm.end`). */
  protected ended: LeaseholdError | null = null;

  constructor(protected readonly options: ShardTermOptions<never>) {
    this.setTimer = options.setTimer ?? realProcessClock.setTimer;
    this.shard = options.term.shard;
    this.epoch = options.term.epoch;
    this.leaderId = options.leaderId;
    this.gateUntil = options.gateUntil;
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

  /** Why the gate is shut, as the engine answers a request it refused (`ServingGate.refusal`). */
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

  /** True once either clock has reached the gate's deadline. */
  protected pastDeadline(now: number): boolean {
    return now >= this.gateUntil.monotonic || this.options.wallClock() >= this.gateUntil.wall;
  }

  /**
   * The gate's deadline passed (its timer fired, or a refusal found it past before the timer did):
   * the term decides what that means (`ShardTerm.closeByTime`).
   */
  protected abstract closeByTime(): void;

  /** Set the timer that closes the gate by time once its deadline passes on either clock (not with `gateless`). */
  protected armGate(): void {
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
}
