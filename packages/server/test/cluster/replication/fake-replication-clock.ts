import type { ReplicationClock } from "../../../src/cluster/replication/replication-clock.js";

/** Let every pending promise callback run (a real turn of the event loop). */
export const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * A clock the test drives: time moves only in {@link advance}, an event-loop turn ends only in
 * {@link endTurn} (group commit), and pending promise callbacks are settled after every timer.
 */
export class FakeReplicationClock implements ReplicationClock {
  t = 0;
  private timers: { at: number; fn: () => void; id: number }[] = [];
  private deferred: (() => void)[] = [];
  private nextId = 0;

  now(): number {
    return this.t;
  }

  setTimer(fn: () => void, ms: number): () => void {
    const id = this.nextId++;
    this.timers.push({ at: this.t + Math.max(0, ms), fn, id });
    return () => {
      this.timers = this.timers.filter((timer) => timer.id !== id);
    };
  }

  defer(fn: () => void): void {
    this.deferred.push(fn);
  }

  /** End the current turn: run what was deferred to its end, then settle promises. */
  async endTurn(): Promise<void> {
    const run = this.deferred;
    this.deferred = [];
    for (const fn of run) fn();
    await settle();
  }

  /** Move time forward by `ms`, firing due timers in order and settling promises after each. */
  async advance(ms: number): Promise<void> {
    const until = this.t + ms;
    for (;;) {
      const due = this.timers.filter((timer) => timer.at <= until).sort((a, b) => a.at - b.at || a.id - b.id)[0];
      if (due === undefined) break;
      this.timers = this.timers.filter((timer) => timer !== due);
      this.t = Math.max(this.t, due.at);
      due.fn();
      await settle();
    }
    this.t = until;
    await settle();
  }

  /** Timers pending. */
  get pendingTimers(): number {
    return this.timers.length;
  }
}
