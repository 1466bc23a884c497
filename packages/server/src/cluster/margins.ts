/**
 * The margins of a leader's timing against clock-rate differences between servers (docs/cluster.md
 * "Why it is safe"). The one assumption: during a wait, the monotonic clocks of any two servers
 * advance at rates within 10% of each other (real hardware drifts by parts per million).
 */

/** The rate difference the margins absorb: 10%. */
export const RATE_TOLERANCE = 0.1;

/**
 * How long before `t_sent + leaderLease` a leader's serving gate closes: {@link RATE_TOLERANCE} of
 * the leader lease, at least 20 ms (the time between reading the clock and sending the renewal).
 */
export function gateMargin(leaderLeaseMs: number): number {
  return Math.max(20, Math.floor(leaderLeaseMs * RATE_TOLERANCE));
}

/**
 * The monotonic time from which a new leader of a shard may grant locks, when its acquisition was
 * answered at `acquiredAt` and the shard's earlier leaders (those whose leases a client may still
 * believe) answered `validForMs` up to `lockDelayMs` (Chubby's lock-delay). A client believes a
 * lease until `validForMs` after it sent the request, and the old leader answered before the
 * takeover; but it counted on its clock and the client on its own, while this wait runs on the new
 * leader's: so the wait gets the same rate margin as the gate, {@link RATE_TOLERANCE} of its length
 * and at least {@link gateMargin}. No wait at all when no earlier leader could have granted a lock
 * (`lockDelayMs` 0: a shard never led).
 */
export function leaseWaitEnd(acquiredAt: number, lockDelayMs: number, leaderLeaseMs: number): number {
  if (lockDelayMs <= 0) return acquiredAt;
  return acquiredAt + lockDelayMs + Math.max(gateMargin(leaderLeaseMs), Math.ceil(lockDelayMs * RATE_TOLERANCE));
}

/**
 * How long a promoted or handed-over table's carried leases last from its promotion (DESIGN.md
 * "Carried leases"): the taker's own `leaseMs`, or, when longer, the longest `validForMs` an
 * earlier leader of the shard answered (`lockDelayMs`, the row's record) plus the margin
 * {@link leaseWaitEnd} gives it. Members may run different `--lease-ms`: a holder that a leader
 * with a longer lease promised `validForMs` keeps its lock for as long as it may believe it,
 * whatever the taker's own lease.
 */
export function carriedLeaseMs(leaseMs: number, lockDelayMs: number, leaderLeaseMs: number): number {
  return Math.max(leaseMs, leaseWaitEnd(0, lockDelayMs, leaderLeaseMs));
}
