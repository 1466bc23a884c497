import { LeaseholdError, LIMITS, type LockRequest, type LockResponse, type LockService, type LockSpec } from "@leasehold/protocol";
import type { LockOptions } from "./lock-options.js";
import { cancelledBy } from "./cancelled-by.js";

/** The final answer of a (possibly multi-poll) lock call and when its last request was sent. */
export interface AcquireResult {
  readonly response: LockResponse;
  /** Monotonic ms just before the request that produced `response` was sent: the lease's origin. */
  readonly sentAt: number;
}

const NO_OPTIONS = {};

function checkTimeout(acquireTimeoutMs: number): void {
  if (typeof acquireTimeoutMs !== "number" || Number.isNaN(acquireTimeoutMs) || acquireTimeoutMs < 0) {
    throw new LeaseholdError("INVALID_ARGUMENT", `acquireTimeoutMs must be a number >= 0 (got ${String(acquireTimeoutMs)})`, {
      path: "acquireTimeoutMs",
    });
  }
}

/**
 * Sends `lock` until it is granted or the total deadline passes, as long polls of at most 60 s
 * with one `requestId`, so that the transport may retry any of them without ever acquiring twice.
 * On abort, a grant the call could not see (the answer was in flight) is probed for and released
 * through `release`.
 */
export async function acquireLocks(
  service: Pick<LockService, "lock">,
  namespace: string,
  locks: readonly LockSpec[],
  options: LockOptions,
  now: () => number,
  release: (tokens: readonly string[]) => void,
  newRequestId: () => string,
): Promise<AcquireResult> {
  const { acquireTimeoutMs = 0, behavior, max, clientDescription, signal } = options;
  checkTimeout(acquireTimeoutMs);
  const requestId = options.requestId ?? newRequestId();
  const start = now();
  const deadline = start + acquireTimeoutMs;
  // Built field by field: conditional object spreads were most of this function's cost in profiles.
  const base: { -readonly [K in keyof LockRequest]: LockRequest[K] } = { requestId, locks: [...locks] };
  if (behavior !== undefined) base.behavior = behavior;
  if (max !== undefined) base.max = max;
  if (clientDescription !== undefined) base.clientDescription = clientDescription;
  const callOptions = signal ? { signal } : NO_OPTIONS;
  for (let poll = 0; ; poll++) {
    if (signal?.aborted) throw cancelledBy(signal);
    const sentAt = poll === 0 ? start : now();
    const wait = Math.ceil(Math.min(LIMITS.maxAcquireTimeoutMs, Math.max(0, deadline - sentAt)));
    let response: LockResponse;
    try {
      // The first poll sends `base` itself (not yet shared with anyone); later polls send copies.
      if (poll === 0) base.acquireTimeoutMs = wait;
      const request = poll === 0 ? base : { ...base, acquireTimeoutMs: wait };
      response = await service.lock(namespace, request, callOptions);
    } catch (err) {
      if (signal?.aborted) {
        releaseRacingGrant(service, namespace, base, release);
        throw cancelledBy(signal);
      }
      throw err;
    }
    if (response.status === "acquired") {
      if (signal?.aborted) {
        release([response.token]);
        throw cancelledBy(signal);
      }
      return { response, sentAt };
    }
    if (now() >= deadline) return { response, sentAt };
  }
}

/**
 * The abort may have crossed a grant on the wire: the server granted, the answer never arrived.
 * Re-sending the same `requestId` without waiting answers that token if it exists, and we release
 * it. If the abandoned request had already left the queues, the probe is a fresh try that may
 * acquire at once, and it is released all the same. Runs in the background; never throws.
 */
function releaseRacingGrant(
  service: Pick<LockService, "lock">,
  namespace: string,
  request: Parameters<LockService["lock"]>[1],
  release: (tokens: readonly string[]) => void,
): void {
  service.lock(namespace, { ...request, acquireTimeoutMs: 0 }).then(
    (answer) => {
      if (answer.status === "acquired") release([answer.token]);
    },
    () => undefined,
  );
}
