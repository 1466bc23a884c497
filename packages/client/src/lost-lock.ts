/**
 * Why a held token was given up:
 * - `not-refreshed`: a refresh answered without it: the server no longer holds it.
 * - `leader-changed`: a refresh was answered under another `leaderId`: a single server
 *   restarted, or in a cluster the namespace's shard changed leader. That voids every token of the
 *   earlier term; it is not sent in refresh or unlock again, and lapses on the old leader if that
 *   one is still alive. When the shard map shows the newer term first (by its epoch), the term's
 *   tokens are refreshed at once rather than at their next renewal, so this comes soon after.
 * - `lease-expired`: its lease ran out while refreshes kept failing.
 * - `max-tenure`: held longer than `maxTenureMs`, the leaked-lock guard; it is no longer
 *   refreshed and lapses.
 * - `client-closed`: `close()` stopped the refresher, so the lock will lapse.
 */
export type LostLockReason = "not-refreshed" | "leader-changed" | "lease-expired" | "max-tenure" | "client-closed";

/** One token the client learned it no longer holds (or soon will not), on `lostLocks`. */
export interface LostLock {
  /** The token, as `lock` answered it. */
  readonly token: string;
  /** Why it was given up. */
  readonly reason: LostLockReason;
}
