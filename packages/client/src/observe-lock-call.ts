import type { LockResponse, LockSpec } from "@leasehold/protocol";
import { clientChannels, clientMessages, errorCode } from "./client-diagnostics.js";
import type { LockOptions } from "./lock-options.js";

/**
 * Runs one `lock` call while someone listens on a `leasehold:client:lock:*` channel: publishes
 * `lock:request` as it begins and exactly one of `lock:granted`, `lock:timeout`,
 * `lock:cancelled` or `lock:error` as it ends. The call gets a `requestId` here when the caller
 * gave none, so every message of the call names it. `LockClient.lock` takes this path only when a
 * lock channel has a subscriber; otherwise nothing here runs.
 */
export function observeLockCall<R extends LockResponse>(
  namespace: string,
  locks: readonly LockSpec[],
  options: LockOptions,
  now: () => number,
  newRequestId: () => string,
  run: (locks: readonly LockSpec[], options: LockOptions) => Promise<R>,
): Promise<R> {
  const c = clientChannels;
  const requestId = typeof options.requestId === "string" ? options.requestId : newRequestId();
  const start = now();
  const request = clientMessages.lockRequest(namespace, requestId, locks, options.acquireTimeoutMs);
  if (c.lockRequest.hasSubscribers) c.lockRequest.publish(request);
  return run(locks, options.requestId === undefined ? { ...options, requestId } : options).then(
    (answer) => {
      if (answer.status === "acquired") {
        if (c.lockGranted.hasSubscribers) c.lockGranted.publish(clientMessages.lockGranted(request, now() - start, answer));
      } else if (c.lockTimeout.hasSubscribers) {
        c.lockTimeout.publish(clientMessages.lockEnd(request, now() - start));
      }
      return answer;
    },
    (err: unknown) => {
      if (errorCode(err) === "CANCELLED") {
        if (c.lockCancelled.hasSubscribers) c.lockCancelled.publish(clientMessages.lockEnd(request, now() - start));
      } else if (c.lockError.hasSubscribers) {
        c.lockError.publish(clientMessages.lockError(request, now() - start, err));
      }
      throw err;
    },
  );
}
