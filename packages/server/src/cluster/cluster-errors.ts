import { LeaseholdError } from "@leasehold/protocol";

/**
 * `503 UNAVAILABLE` with `details.retryAfterMs` (the HTTP layer turns it into a `retry-after`
 * header in whole seconds): the shard has no leader right now, its leader is taking over, or this
 * leader just stepped down. Clients re-send, to this server or another.
 */
export function unavailable(message: string, retryAfterMs: number, details: Record<string, unknown> = {}): LeaseholdError {
  return new LeaseholdError("UNAVAILABLE", message, { ...details, retryAfterMs: Math.max(1, Math.ceil(retryAfterMs)) });
}

/**
 * The `retryAfterMs` of a 503 from a server that is starting to serve a shard with its table (it
 * adopts a hand-over, or loads the carried namespaces' timestamp bounds): a statement or two away,
 * tens of ms, so a client re-sends soon rather than after the leader-lease-based wait of a shard
 * with no leader (a second at the default lease), which would stall it far longer than the step.
 */
export const TAKING_OVER_RETRY_AFTER_MS = 50;

/** `421 NOT_LEADER`: another server leads the shard (`leaderUrl` omitted when unknown). */
export function notLeader(namespace: string, shard: number, leaderUrl: string | null): LeaseholdError {
  const where = leaderUrl === null ? "its leader is not known yet; retry another server" : `send it to ${leaderUrl}`;
  return new LeaseholdError(
    "NOT_LEADER",
    `this server does not lead shard ${shard}, which namespace ${JSON.stringify(namespace)} belongs to; ${where}`,
    leaderUrl === null ? { shard } : { shard, leaderUrl },
  );
}

/** Any error of a coordinator statement, as the 503 a client sees: it re-sends shortly. */
export function coordinatorUnavailable(err: unknown, retryAfterMs: number): LeaseholdError {
  if (err instanceof LeaseholdError) return err;
  const reason = err instanceof Error ? err.message : String(err);
  return unavailable(`the cluster's PostgreSQL could not be reached (${reason}); retry shortly`, retryAfterMs);
}
