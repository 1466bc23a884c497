/**
 * The kinds of fault the plan draws (sim-faults.ts) and what each promises: which are graceful,
 * which stop servers only, which are two failures at once.
 */

/** One fault the plan can inject, drawn by the seed. */
export type FaultKind =
  | "crash"
  | "sigterm"
  | "pause"
  | "partition-replication"
  | "partition-then-crash"
  | "cut-database"
  | "slow-database"
  | "wall-step"
  | "drift"
  | "slow-partition-then-crash"
  | "rolling-restart"
  | "stop-standby-dies"
  | "stop-slow-database"
  | "restart-then-pause"
  | "reset-replication"
  | "join"
  | "twin"
  | "isolate"
  | "host-crash-after-grant";

/** The faults the plan draws from (a kind listed twice is drawn twice as often). */
export const FAULTS: readonly FaultKind[] = [
  "crash",
  "crash",
  "sigterm",
  "pause",
  "partition-replication",
  "partition-then-crash",
  "cut-database",
  "slow-database",
  "wall-step",
  "drift",
  "slow-partition-then-crash",
  "rolling-restart",
  "stop-standby-dies",
  "stop-slow-database",
  "restart-then-pause",
  "reset-replication",
  "join",
  "twin",
  "isolate",
];

/** What a graceful stop promises: one server stopped at a time, with no crash, loses nothing, protected or not. */
export const GRACEFUL: ReadonlySet<FaultKind> = new Set(["sigterm", "rolling-restart"]);

/**
 * Faults that only stop servers by SIGTERM, one at a time, so a waiter keeps its place through them
 * (the queue-order check holds across them). Not a stop whose standby then crashes or pauses: the
 * hand-over's taker may die with the carried places and a replica that never held them take over.
 */
export const STOPS_ONLY: ReadonlySet<FaultKind> = new Set(["sigterm", "stop-slow-database"]);

/** Faults that are two failures at once (or a misconfiguration): a lock may be lost through them (every other promise is still checked). */
export const MULTIPLE: ReadonlySet<FaultKind> = new Set(["partition-then-crash", "slow-partition-then-crash", "stop-standby-dies", "stop-slow-database", "twin"]);
