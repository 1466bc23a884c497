import { Registry, collectDefaultMetrics } from "prom-client";

let shared: Registry | null = null;

/**
 * Process and runtime metrics from prom-client's default collectors (CPU, resident memory, open
 * file descriptors, event-loop delay, GC pauses by kind, heap spaces, active handles, Node
 * version), in a prom-client registry of their own whose text is appended to the hand-written
 * registry's at scrape time. The per-request hot path stays hand-written (ADR 0006): prom-client
 * only does work when scraped, apart from its event-loop and GC observers.
 *
 * One registry per process, created on first use: these numbers describe the process, not a
 * server, and the collectors install process-wide observers that must not be added once per
 * server (tests start hundreds).
 */
export function runtimeRegistry(): Registry {
  if (shared === null) {
    shared = new Registry();
    // 10 ms resolution is prom-client's default for the event-loop delay histogram; finer costs more timer wakeups.
    collectDefaultMetrics({ register: shared, eventLoopMonitoringPrecision: 10 });
  }
  return shared;
}
