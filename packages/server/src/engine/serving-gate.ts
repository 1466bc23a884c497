import type { LeaseholdError } from "@leasehold/protocol";

/**
 * The engine's port for "may I still serve?". A cluster leader may serve a shard only until its
 * gate closes (`t_sent + leaderLease − margin`, DESIGN.md "Cluster mode"; the cluster's gate
 * checks the monotonic clock and the wall clock, closing when either passes, since a paused VM's
 * monotonic clock stands still), so every grant, refresh and timestamp asks the gate first, with
 * the engine's own clock reading.
 * A single server has no gate (always open). Implementations live outside the engine (the cluster
 * runtime) and are injected.
 */
export interface ServingGate {
  /** True while the engine may serve at monotonic time `now` (the engine's clock, in ms). */
  isOpen(now: number): boolean;
  /**
   * The error an operation fails with once the gate is closed (a 503 or 421 the client re-sends
   * elsewhere). Called only after {@link isOpen} answered false, so it may also start stepping down.
   */
  refusal(): LeaseholdError;
}
