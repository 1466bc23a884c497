import { LeaseholdError, LIMITS, type LockService, type WaitForLocksResponse, type WaitSpec } from "@leasehold/protocol";
import { cancelledBy } from "./cancelled-by.js";

/** Options of `LockClient.waitForLocks`. */
export interface WaitForLocksOptions {
  /**
   * How long to wait, in ms. Default 0: answer at once (`free` only if nothing conflicts now).
   * Any length works, including `Infinity`: waits longer than the protocol's 60 s per request are
   * long polls of at most 60 s, each re-sent with the same `requestId` until the total deadline.
   */
  readonly acquireTimeoutMs?: number | undefined;
  /**
   * Abandons the wait: the call rejects `CANCELLED`, the server takes the wait out of every queue
   * (the HTTP request is closed, and `lock-cancel` is sent by its `requestId`). Default: none.
   */
  readonly signal?: AbortSignal | undefined;
}

/** What `waitForLocks` needs of a service: the optional method, and `lock-cancel` when there is one. */
export type WaitRequester = Pick<LockService, "waitForLocks" | "cancelLock">;

const waitFrom = (now: number, deadline: number): number => Math.ceil(Math.min(LIMITS.maxAcquireTimeoutMs, Math.max(0, deadline - now)));

/**
 * `wait-for-locks` until `free` or the total deadline: polls of at most 60 s under one `requestId`,
 * so the transport may re-send any of them (a re-sent wait joins the one still running). A poll
 * answered `timeout` before the deadline has left the server's queues; the next one queues again
 * at the back, which is what a wait longer than one request can promise.
 */
export async function waitForLocks(
  service: WaitRequester,
  namespace: string,
  locks: readonly WaitSpec[],
  options: WaitForLocksOptions,
  now: () => number,
  requestId: string,
): Promise<WaitForLocksResponse> {
  const { acquireTimeoutMs = 0, signal } = options;
  if (typeof acquireTimeoutMs !== "number" || Number.isNaN(acquireTimeoutMs) || acquireTimeoutMs < 0) {
    throw new LeaseholdError("INVALID_ARGUMENT", `acquireTimeoutMs must be a number >= 0 (got ${String(acquireTimeoutMs)})`, { path: "acquireTimeoutMs" });
  }
  if (service.waitForLocks === undefined) {
    throw new LeaseholdError("NOT_FOUND", "waitForLocks: this LockService does not offer wait-for-locks", {});
  }
  const deadline = now() + acquireTimeoutMs;
  const callOptions = signal === undefined ? {} : { signal };
  for (;;) {
    if (signal?.aborted) throw cancelledBy(signal, "waitForLocks was aborted by its signal");
    let answer: WaitForLocksResponse;
    try {
      answer = await service.waitForLocks(namespace, { requestId, locks: [...locks], acquireTimeoutMs: waitFrom(now(), deadline) }, callOptions);
    } catch (err) {
      if (!signal?.aborted) throw err;
      // The server may not have seen the closed connection yet: end the wait there for certain.
      service.cancelLock?.(namespace, { requestId }).catch(() => undefined);
      throw cancelledBy(signal, "waitForLocks was aborted by its signal");
    }
    if (answer.status === "free" || now() >= deadline) return answer;
  }
}
