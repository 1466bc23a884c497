import type { ProcessClock } from "@leasehold/server/internal";
import type { EventOwner, Scheduler } from "./scheduler.js";

/** A pending timer of one process: when its monotonic clock reaches `deadline`, `fn` runs. */
interface Timer {
  readonly deadline: number;
  readonly fn: () => void;
  cancel: () => void;
}

/**
 * One simulated process's clocks and timers (a {@link ProcessClock}) on the shared
 * {@link Scheduler}, and its life: it can pause (a stopped VM: no event runs, and its monotonic
 * clock stands still), resume (the wall clock jumps to the true time, as NTP sets it after a VM
 * resumes), run fast or slow (drift of the monotonic clock within a bound), have its wall clock
 * stepped, and crash (every event dropped, its code never runs again).
 */
export class SimProcess implements ProcessClock, EventOwner {
  alive = true;
  /**
   * True once its host crashed (power loss, kernel panic: `--host-crashes`), not only the process:
   * what it sent that has not arrived yet is lost with the host's socket buffers (the network and
   * the world drop it at arrival). A process killed by SIGKILL keeps it false: the kernel still
   * sends what it wrote.
   */
  hostCrashed = false;
  private paused = false;
  private held: (() => void)[] = [];
  /** Monotonic reading at {@link anchorReal} and the rate it advances at per simulated ms. */
  private anchorMono: number;
  private anchorReal: number;
  private rate = 1;
  /** Wall clock = simulated time + this (a step moves it). */
  private wallOffset: number;
  private readonly timers = new Set<Timer>();

  constructor(
    readonly name: string,
    readonly scheduler: Scheduler,
    options: { readonly monoStart?: number; readonly wallEpoch?: number } = {},
  ) {
    this.anchorMono = options.monoStart ?? 1_000;
    this.anchorReal = scheduler.now;
    this.wallOffset = options.wallEpoch ?? 1_800_000_000_000;
    scheduler.register(name, this);
  }

  get holding(): boolean {
    return this.paused;
  }

  hold(fire: () => void): void {
    this.held.push(fire);
  }

  /** Bound: the port's methods may be passed on detached. */
  readonly setTimer = (fn: () => void, ms: number): (() => void) => {
    // As Node's setTimeout: a delay under 1 ms is 1 ms (a timer re-armed for a deadline already
    // past polls every millisecond, as it does in production, instead of spinning at one instant).
    const timer: Timer = { deadline: this.now() + Math.max(1, ms), fn, cancel: () => undefined };
    this.timers.add(timer);
    this.arm(timer);
    return () => {
      timer.cancel();
      this.timers.delete(timer);
    };
  };

  readonly defer = (fn: () => void): void => {
    this.scheduler.at(this.scheduler.now, this.name, "defer", fn);
  };

  readonly now = (): number => this.anchorMono + (this.paused ? 0 : (this.scheduler.now - this.anchorReal) * this.rate);

  readonly wall = (): number => this.scheduler.now + this.wallOffset;

  /** Run `fn` as an event of this process at the current time (an incoming message, a statement's answer). */
  deliver(label: string, fn: () => void): void {
    this.scheduler.at(this.scheduler.now, this.name, label, fn);
  }

  /** Stop: no event of this process runs and its monotonic clock stands still until {@link resume}. */
  pause(): void {
    if (this.paused || !this.alive) return;
    this.reanchor();
    this.paused = true;
    // Its timers wait for the resume (events already due are held by the scheduler meanwhile).
    this.rearmAll();
  }

  /** Go on where it stopped: the monotonic clock did not count the pause; held events run now, timers fire late. */
  resume(): void {
    if (!this.paused) return;
    this.paused = false;
    this.anchorReal = this.scheduler.now;
    this.rearmAll();
    for (const fire of this.held.splice(0)) fire();
  }

  /** The monotonic clock runs at `rate` (1: true time) from now on. */
  drift(rate: number): void {
    this.reanchor();
    this.rate = rate;
    this.rearmAll();
  }

  /** Step the wall clock by `ms` (an NTP correction, or an operator's mistake). */
  stepWall(ms: number): void {
    this.wallOffset += ms;
  }

  /** Crash: every pending event and timer of this process is dropped, for good. */
  kill(): void {
    this.alive = false;
    for (const timer of this.timers) timer.cancel();
    this.timers.clear();
    this.held = [];
  }

  private reanchor(): void {
    this.anchorMono = this.now();
    this.anchorReal = this.scheduler.now;
  }

  private arm(timer: Timer): void {
    // A hair past the deadline, so the timer never reads a clock short of it (floating point).
    const wait = (timer.deadline - this.now()) / this.rate + 1e-6;
    const cancel = this.scheduler.at(this.scheduler.now + Math.max(0, wait), this.name, "timer", () => {
      this.timers.delete(timer);
      timer.fn();
    });
    timer.cancel = cancel;
  }

  private rearmAll(): void {
    for (const timer of this.timers) {
      timer.cancel();
      if (!this.paused) this.arm(timer);
    }
  }
}
