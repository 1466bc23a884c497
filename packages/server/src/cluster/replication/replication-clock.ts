/**
 * The time a replication stream needs, as one port, so the tests of the rule (whose subject is
 * time: a standby late by a third of the leader lease) drive it with a fake clock.
 */
export interface ReplicationClock {
  /** Monotonic milliseconds. */
  now(): number;
  /** Run `fn` after `ms`; the answer cancels it. */
  setTimer(fn: () => void, ms: number): () => void;
  /**
   * Run `fn` once the current event-loop turn is over (`setImmediate`): every entry appended during
   * one turn goes in one batch (group commit).
   */
  defer(fn: () => void): void;
}
