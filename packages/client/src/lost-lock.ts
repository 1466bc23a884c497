/**
 * Why a held token was given up:
 * - `not-refreshed`: a refresh answered without it: the server no longer holds it.
 * - `leader-changed`: the server answered with a new `leaderId` (it restarted), which voids every
 *   earlier token.
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
