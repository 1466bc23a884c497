import type { RetryHandler } from "undici";
import { fullJitterBackoff } from "./full-jitter-backoff.js";
import { retryAfterMs } from "./retry-after-ms.js";

/**
 * The retry decision of undici's `RetryAgent`, the same as its built-in one (error codes, methods,
 * status codes, retry budget, a `retry-after` answer honoured up to the longest backoff), except
 * for how long it sleeps: {@link fullJitterBackoff} instead of the plain doubling, so clients that
 * lost the server at the same moment do not come back in step. `random` is for tests.
 */
export function jitteredRetry(random?: () => number): RetryHandler.RetryCallback {
  return (err, { state, opts }, callback) => {
    const retry = opts.retryOptions ?? {};
    const { statusCode, code, headers } = err as Error & { statusCode: number | undefined; code: string | undefined; headers: Record<string, string | string[] | undefined> | undefined };
    const refused =
      (code !== undefined && code !== "UND_ERR_REQ_RETRY" && !(retry.errorCodes ?? []).includes(code)) ||
      (retry.methods !== undefined && !retry.methods.includes(opts.method)) ||
      (statusCode !== undefined && retry.statusCodes !== undefined && !retry.statusCodes.includes(statusCode)) ||
      state.counter > (retry.maxRetries ?? 5);
    if (refused) return callback(err);
    const capMs = retry.maxTimeout ?? 30_000;
    const afterMs = retryAfterMs(headers?.["retry-after"]) ?? 0;
    // The server's own retry-after is a floor it asked for, not a herd: keep it (capped).
    const wait = afterMs > 0 ? Math.min(afterMs, capMs) : fullJitterBackoff(state.counter, { baseMs: retry.minTimeout ?? 500, capMs, random });
    setTimeout(() => callback(null), wait);
  };
}
