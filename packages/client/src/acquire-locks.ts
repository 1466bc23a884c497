import { LeaseholdError, LIMITS, type CallOptions, type LockRequest, type LockResponse, type LockService, type LockSpec } from "@leasehold/protocol";
import type { LockOptions } from "./lock-options.js";
import { cancelledBy } from "./cancelled-by.js";

/** The final answer of a (possibly multi-poll) lock call and when its last request was sent. */
export interface AcquireResult {
  readonly response: LockResponse;
  /** Monotonic ms just before the request that produced `response` was sent: the lease's origin. */
  readonly sentAt: number;
}

const NO_OPTIONS = {};

/**
 * Where lock requests go: a `LockService`'s `lock`, and its `cancelLock` if it has one (the HTTP
 * transport and the server's embedded service do; the client's lock batcher cancels its own).
 */
export type LockRequester = Pick<LockService, "lock"> & Partial<Pick<LockService, "cancelLock">>;

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
 * On abort the request is cancelled by its `requestId` (`lock-cancel`) when the service offers
 * it: that ends its wait on the server for certain and releases a grant whose answer was in
 * flight. A grant that still reaches the call after the abort is released through `release`.
 *
 * The first poll is chained with `then` rather than awaited in an async function: almost every
 * call ends with it, and each async frame between the caller and the answer is another promise
 * and microtask per lock (measured: a few percent of a 64-caller client's throughput). Later polls
 * (waits over 60 s, or a timeout answered before the client's own deadline) run in a loop.
 */
export function acquireLocks(
  service: LockRequester,
  namespace: string,
  locks: readonly LockSpec[],
  options: LockOptions,
  now: () => number,
  release: (tokens: readonly string[]) => void,
  newRequestId: () => string,
): Promise<AcquireResult> {
  try {
    return firstPoll(service, namespace, locks, options, now, release, newRequestId);
  } catch (err) {
    // As from an async function: bad input (a timeout that is not a number, locks that are not a
    // list) rejects the returned promise instead of throwing at the caller.
    return Promise.reject(err);
  }
}

function firstPoll(...[service, namespace, locks, options, now, release, newRequestId]: Parameters<typeof acquireLocks>): Promise<AcquireResult> {
  const { acquireTimeoutMs = 0, behavior, max, clientDescription, signal } = options;
  checkTimeout(acquireTimeoutMs);
  if (!Array.isArray(locks)) {
    throw new LeaseholdError("INVALID_ARGUMENT", `locks must be an array of lock specs (got ${locks === null ? "null" : typeof locks})`, { path: "locks" });
  }
  const requestId = options.requestId ?? newRequestId();
  const start = now();
  const deadline = start + acquireTimeoutMs;
  // Built field by field: conditional object spreads were most of this function's cost in profiles.
  const base: { -readonly [K in keyof LockRequest]: LockRequest[K] } = { requestId, locks: [...locks] };
  if (behavior !== undefined) base.behavior = behavior;
  if (max !== undefined) base.max = max;
  if (clientDescription !== undefined) base.clientDescription = clientDescription;
  const poll: Poll = { service, namespace, base, deadline, signal, callOptions: signal ? { signal } : NO_OPTIONS, now, release };
  if (signal?.aborted) return Promise.reject(cancelledBy(signal));
  // The first poll sends `base` itself (not yet shared with anyone); later polls send copies.
  base.acquireTimeoutMs = waitFrom(start, deadline);
  return send(poll, base).then(
    (response) => outcome(poll, response, start) ?? laterPolls(poll),
    (err: unknown) => failed(poll, err),
  );
}

/** What every poll of one call shares. */
interface Poll {
  readonly service: LockRequester;
  readonly namespace: string;
  readonly base: LockRequest;
  readonly deadline: number;
  readonly signal: AbortSignal | undefined;
  readonly callOptions: CallOptions;
  readonly now: () => number;
  readonly release: (tokens: readonly string[]) => void;
}

/** The wait of a poll sent at `sentAt`: what is left of the deadline, at most 60 s. */
const waitFrom = (sentAt: number, deadline: number): number => Math.ceil(Math.min(LIMITS.maxAcquireTimeoutMs, Math.max(0, deadline - sentAt)));

/** `service.lock`, with a synchronous throw turned into a rejection (as an `await` would). */
function send(poll: Poll, request: LockRequest): Promise<LockResponse> {
  try {
    return poll.service.lock(poll.namespace, request, poll.callOptions);
  } catch (err) {
    return Promise.reject(err);
  }
}

/** The call's result for a poll's answer, or `undefined` when another poll must go. */
function outcome(poll: Poll, response: LockResponse, sentAt: number): AcquireResult | undefined {
  const { signal } = poll;
  if (response.status === "acquired") {
    if (signal?.aborted) {
      poll.release([response.token]);
      throw cancelledBy(signal);
    }
    return { response, sentAt };
  }
  return poll.now() >= poll.deadline ? { response, sentAt } : undefined;
}

/** A poll failed: on abort, cancel the request on the server, and say `CANCELLED`. */
function failed(poll: Poll, err: unknown): never {
  const { signal } = poll;
  if (signal?.aborted) {
    cancelAbandoned(poll);
    throw cancelledBy(signal);
  }
  throw err;
}

/** Polls after the first, until one is granted or the deadline passes. */
async function laterPolls(poll: Poll): Promise<AcquireResult> {
  for (;;) {
    if (poll.signal?.aborted) throw cancelledBy(poll.signal);
    const sentAt = poll.now();
    let response: LockResponse;
    try {
      response = await send(poll, { ...poll.base, acquireTimeoutMs: waitFrom(sentAt, poll.deadline) });
    } catch (err) {
      failed(poll, err);
    }
    const result = outcome(poll, response, sentAt);
    if (result !== undefined) return result;
  }
}

/**
 * The aborted request may still wait on the server (it has not yet noticed the closed
 * connection), or its grant may have crossed the abort on the wire. `lock-cancel` by its
 * `requestId` settles both: a waiting request is abandoned, a granted one released, and an
 * unknown id changes nothing. It never joins the wait, as a re-sent `lock` with that id would (the
 * zero-wait probe this replaces did: reaching the server before the disconnect, it kept the
 * abandoned request queued until its own deadline). Runs in the background; never throws.
 */
function cancelAbandoned(poll: Poll): void {
  const { service, namespace, base } = poll;
  if (service.cancelLock === undefined || base.requestId === undefined) return;
  try {
    service.cancelLock(namespace, { requestId: base.requestId }).catch(() => undefined);
  } catch {
    // A synchronous throw from a custom service: nothing more to do than for a failed call.
  }
}
