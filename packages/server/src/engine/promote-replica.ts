import { LeaseholdError } from "@leasehold/protocol";
import { HELD, WAITING, type LockRequestState } from "./lock-request-state.js";
import type { LockTable } from "./lock-table.js";
import type { NamespaceState } from "./namespace-state.js";
import type { PromoteOptions, PromoteSummary } from "./replication-entries.js";
import type { ServingGate } from "./serving-gate.js";

/** Default of {@link PromoteOptions.claimWindowMs}. */
export const DEFAULT_CLAIM_WINDOW_MS = 2000;

/**
 * The gate of a replica: always closed, so a passive copy never grants, refreshes, hands out a
 * timestamp or lets a lease lapse on its own; only entries from its leader change it.
 */
export const REPLICA_GATE: ServingGate = Object.freeze({
  isOpen: () => false,
  refusal: () => new LeaseholdError("UNAVAILABLE", "this lock table is a standby replica: it serves only once promoted"),
});

/** The waiters a promoted table carried, kept until `until` for their re-sent requests. */
export interface ClaimWindow {
  /** When unclaimed ones are dropped, on the engine's clock. */
  readonly until: number;
  /** Its length (`PromoteOptions.claimWindowMs`): a host that opens its gate later counts it again from then. */
  readonly windowMs: number;
  /** Carried waiters nobody has re-sent yet (some may have been granted meanwhile). */
  readonly unclaimed: Set<LockRequestState>;
}

/**
 * Turn replica namespaces into serving ones at `now`: every lease restarts at the carried lease
 * (`options.carriedLeaseMs`, never shorter than the table's `leaseMs`; in each namespace's grant
 * order), every waiter is kept for the claim window, and new tokens are checked against live ones
 * from now on. Answers the window (null when no waiter was carried).
 */
export function startServing(table: LockTable, namespaces: Iterable<NamespaceState>, now: number, options: PromoteOptions): { summary: PromoteSummary; claims: ClaimWindow | null } {
  const windowMs = options.claimWindowMs ?? DEFAULT_CLAIM_WINDOW_MS;
  if (!Number.isSafeInteger(windowMs) || windowMs < 0) throw new RangeError(`claimWindowMs must be a non-negative integer (got ${windowMs})`);
  const carriedMs = options.carriedLeaseMs ?? table.leaseMs;
  if (!(carriedMs > 0) || !Number.isFinite(carriedMs)) throw new RangeError(`carriedLeaseMs must be a positive number (got ${carriedMs})`);
  // Restarted together on a list of their own: a lease granted after the promotion still lapses on time.
  const restartAt = now + Math.max(carriedMs, table.leaseMs);
  const until = Math.ceil(now + windowMs);
  const unclaimed = new Set<LockRequestState>();
  let count = 0;
  let tokens = 0;
  for (const ns of namespaces) {
    count++;
    for (const req of ns.tokens.values()) {
      table.leases.restart(req, restartAt);
      tokens++;
    }
    for (const req of ns.waiting) unclaimed.add(req);
    ns.replicaWaiters = null;
  }
  table.guardTokens = true;
  const summary: PromoteSummary = { namespaces: count, tokens, waiters: unclaimed.size, claimUntil: until };
  return { summary, claims: unclaimed.size === 0 ? null : { until, windowMs, unclaimed } };
}

/**
 * Drop what the claim window kept and nobody claimed: waiters leave their queues (releasing their
 * partial holds, which grants the next in line) and tokens granted to them meanwhile are released.
 * Answers how many were dropped.
 */
export function dropUnclaimed(table: LockTable, claims: ClaimWindow): number {
  let dropped = 0;
  // Statuses change as drops grant others, so each is looked at when its turn comes.
  for (const req of [...claims.unclaimed]) {
    if (req.status === WAITING) table.endWaiting(req, "unclaimed");
    else if (req.status === HELD) table.releaseToken(req, "unclaimed");
    else continue;
    dropped++;
  }
  claims.unclaimed.clear();
  return dropped;
}
