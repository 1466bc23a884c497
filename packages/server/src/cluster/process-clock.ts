import type { ReplicationClock } from "./replication/replication-clock.js";

/**
 * Time as one process of a cluster sees it: the port through which the cluster's decisions read
 * both clocks and set timers (DESIGN.md "Proving cluster mode"), so the deterministic simulator can
 * give each simulated process clocks of its own that pause, step and drift, and timers that fire in
 * its seeded order. Production plugs in {@link realProcessClock}.
 */
export interface ProcessClock extends ReplicationClock {
  /** Monotonic milliseconds (`performance.now()`): safety timing (the serving gate, lease-waits) counts on it. */
  now(): number;
  /** Wall-clock milliseconds since the epoch (`Date.now()`): the serving gate also closes by it (a paused VM's monotonic clock stood still). */
  wall(): number;
}

/** Node's clocks and timers: `performance.now()`, `Date.now()`, unref'd `setTimeout` and `setImmediate`. */
export const realProcessClock: ProcessClock = {
  now: () => performance.now(),
  wall: () => Date.now(),
  setTimer(fn, ms) {
    const t = setTimeout(fn, Math.max(0, Math.ceil(ms)));
    t.unref();
    return () => clearTimeout(t);
  },
  defer(fn) {
    setImmediate(fn);
  },
};
