import type { GrantEvent, History } from "./history-types.js";

/** The span during which a holder was both promised its lock and still using it. */
export interface LeaseInterval {
  /** The grant it belongs to. */
  readonly grant: GrantEvent;
  /** When the grant was received. */
  readonly start: number;
  /** The earlier of the guarantee's end and the release (or the guarantee's end if never released). */
  readonly end: number;
}

/**
 * Each grant's lease interval `[grantReceivedAt, min(guaranteeEndsAt, releasedAt)]`. The interval
 * is empty (`end <= start`) when the grant arrived after its guarantee had already run out.
 */
export function leaseIntervals(history: History): LeaseInterval[] {
  const releasedAt = new Map<string, number>();
  for (const r of history.releases) {
    const seen = releasedAt.get(r.holder);
    if (seen === undefined || r.releasedAt < seen) releasedAt.set(r.holder, r.releasedAt);
  }
  return history.grants.map((grant) => ({
    grant,
    start: grant.grantReceivedAt,
    end: Math.min(grant.guaranteeEndsAt, releasedAt.get(grant.holder) ?? Infinity),
  }));
}
