import { LeaseholdError, isErrorCode, responseValidators, type Validator } from "@leasehold/protocol";

/** Error codes of failures that produced no answer and that a request may be re-sent after. */
export const CONNECTION_ERRORS: readonly string[] = ["ECONNRESET", "ECONNREFUSED", "EPIPE", "ENOTFOUND", "EHOSTUNREACH", "ENETUNREACH", "UND_ERR_SOCKET"];

/** The `code` of a Node or undici error, if it has one (AggregateErrors carry their members' code). */
export function errorCode(err: unknown): string | undefined {
  if (typeof err !== "object" || err === null) return undefined;
  if ("code" in err && typeof err.code === "string") return err.code;
  if (err instanceof AggregateError) return errorCode(err.errors[0]);
  return undefined;
}

/**
 * A failure that produced no HTTP answer, as a `LeaseholdError`: the caller's abort is
 * `CANCELLED`; everything else (refused, reset, closed, timed out) is `UNAVAILABLE`: the service
 * could not be reached, and what the request did there is unknown.
 */
export function transportError(err: unknown, operation: string, signal: AbortSignal | undefined): LeaseholdError {
  if (err instanceof LeaseholdError) return err;
  if (signal?.aborted) {
    return new LeaseholdError("CANCELLED", `${operation} was aborted by its signal`, {}, { cause: signal.reason });
  }
  const code = errorCode(err) ?? "UNKNOWN";
  const message = err instanceof Error ? err.message : String(err);
  return new LeaseholdError("UNAVAILABLE", `${operation}: the lock service could not be reached (${code}: ${message})`, { cause: code }, { cause: err });
}

/**
 * A non-2xx answer as a `LeaseholdError`. A well-formed error body keeps its code, message and
 * details; anything else is `BAD_RESPONSE`, except a bare 503 (a proxy in front of the service),
 * which is still `UNAVAILABLE`.
 */
export function errorFromAnswer(status: number, text: string, operation: string): LeaseholdError {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  if (responseValidators.error.check(body) && isErrorCode(body.error.code)) {
    return new LeaseholdError(body.error.code, body.error.message, body.error.details);
  }
  if (status === 503) return new LeaseholdError("UNAVAILABLE", `${operation}: the service answered 503 without an error body`, { status });
  return new LeaseholdError("BAD_RESPONSE", `${operation}: the service answered ${status} with a body that is not a leasehold error`, {
    status,
    body: text.slice(0, 200),
  });
}

/** A 2xx answer's body parsed and checked against the protocol; anything else as its error. */
export function checkedAnswer<T>(status: number, text: string, operation: string, validator: Validator<T>): T {
  if (status < 200 || status >= 300) throw errorFromAnswer(status, text, operation);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new LeaseholdError("BAD_RESPONSE", `${operation}: the answer is not JSON`, { status, body: text.slice(0, 200) });
  }
  if (!validator.check(parsed)) {
    throw new LeaseholdError("BAD_RESPONSE", `${operation}: the answer does not match the protocol`, { status });
  }
  return parsed;
}
