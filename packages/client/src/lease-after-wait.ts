import type { Lease, LockAcquiredResponse, RefreshResponse } from "@leasehold/protocol";
import type { Autobatcher } from "./autobatcher.js";
import type { RefreshAsk } from "./batch-functions.js";

/**
 * The lease to track a fresh grant by. Counted from before the request was sent, as the protocol
 * says, unless the request waited in the server's queue for more than half of `validForMs`: that
 * lease is then mostly or wholly spent although the server has only just granted the lock (and
 * keeps it for `leaseMs` from the grant), and the refresher would drop the token as
 * `lease-expired` at its next tick without ever renewing it. So renew it once, now, through
 * `refresh` (the client's batched refresh), and count from this refresh (`now`). If the refresh
 * fails or does not answer the token, keep the grant's lease: the refresher then reports the lock
 * lost, as before. Found by the reliability suite (section 1). `LockClient` calls this only for a
 * grant that came after such a wait.
 */
export async function leaseAfterWait(
  refresh: Autobatcher<RefreshAsk, RefreshResponse>,
  response: LockAcquiredResponse,
  sentAt: number,
  now: () => number,
): Promise<[Lease, number]> {
  const renewSentAt = now();
  try {
    const renewed = await refresh.submit({ tokens: [response.token] });
    if (renewed.lease.leaderId === response.lease.leaderId && renewed.refreshed.includes(response.token)) {
      return [renewed.lease, renewSentAt];
    }
  } catch {
    // The refresher retries and reports; the caller still gets its grant.
  }
  return [response.lease, sentAt];
}
