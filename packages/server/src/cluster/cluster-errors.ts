import { LeaseholdError } from "@leasehold/protocol";

/**
 * `503 UNAVAILABLE` with `details.retryAfterMs` (the HTTP layer turns it into a `retry-after`
 * header in whole seconds): the shard has no leader right now, its leader is taking over, or this
 * leader just stepped down. Clients re-send, to this server or another.
 */
export function unavailable(message: string, retryAfterMs: number, details: Record<string, unknown> = {}): LeaseholdError {
  return new LeaseholdError("UNAVAILABLE", message, { ...details, retryAfterMs: Math.max(1, Math.ceil(retryAfterMs)) });
}

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
