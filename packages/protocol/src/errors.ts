/**
 * Every error code with the HTTP status it travels with. The wire codes are exactly PROTOCOL.md's
 * table; `BAD_RESPONSE` never travels on the wire (clients raise it for an answer that does not match
 * the protocol). `CANCELLED` is raised by clients for a caller's abort, and travels only on a
 * `lock-batch` line of an entry given up through `lock-cancel` (or on the 499 answer of a single
 * `lock` given up that way).
 */
export const ERROR_STATUS = {
  INVALID_ARGUMENT: 400,
  UNAUTHENTICATED: 401,
  PERMISSION_DENIED: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  REQUEST_ID_CONFLICT: 409,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  TOO_MANY_REQUESTS: 429,
  NOT_LEADER: 421,
  INTERNAL: 500,
  UNAVAILABLE: 503,
  CANCELLED: 499,
  BAD_RESPONSE: 502,
} as const;

/** A leasehold error code. */
export type ErrorCode = keyof typeof ERROR_STATUS;

/** The error codes as a constant list. */
export const ERROR_CODES = Object.keys(ERROR_STATUS) as readonly ErrorCode[];

/** Details attached to an error; for validation errors `path` names the offending field. */
export type ErrorDetails = Readonly<Record<string, unknown>>;

/** True when `value` is one of {@link ERROR_CODES}. */
export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === "string" && Object.hasOwn(ERROR_STATUS, value);
}

/**
 * Marks every LeaseholdError, whichever copy of this module made it. `Symbol.for` gives one symbol
 * per process, so an error made by the CommonJS build is recognised by the ESM build and the other
 * way round (the dual-package hazard: a program that loads both gets two LeaseholdError classes).
 */
const BRAND: unique symbol = Symbol.for("leasehold.LeaseholdError") as never;

/**
 * The one error class of leasehold, on the server and in clients alike. `code` is stable and meant
 * for programs; `message` says what was wrong and where, for people; `status` is the HTTP status
 * the code travels with.
 */
export class LeaseholdError extends Error {
  /** Stable string code from {@link ERROR_CODES}. */
  readonly code: ErrorCode;
  /** HTTP status of the code. */
  readonly status: number;
  /** Machine-readable context, for example `{ path: "locks[0].mode" }`. */
  readonly details: ErrorDetails;
  /** The cross-copy mark {@link LeaseholdError} instances carry (see `instanceof` below). */
  readonly [BRAND] = true;

  /**
   * `err instanceof LeaseholdError` holds for an error made by any copy of this package (its ESM
   * and CommonJS builds, or two installed versions), by its mark; subclasses keep the ordinary
   * prototype check.
   */
  static override [Symbol.hasInstance](value: unknown): boolean {
    if (this !== LeaseholdError) return Function.prototype[Symbol.hasInstance].call(this, value);
    return typeof value === "object" && value !== null && (value as { [BRAND]?: unknown })[BRAND] === true;
  }

  constructor(code: ErrorCode, message: string, details: ErrorDetails = {}, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "LeaseholdError";
    this.code = code;
    this.status = ERROR_STATUS[code];
    this.details = details;
  }

  /** The wire body of this error: `{ error: { code, message, details } }`. */
  toJSON(): { error: { code: ErrorCode; message: string; details: ErrorDetails } } {
    return { error: { code: this.code, message: this.message, details: this.details } };
  }
}

/** True when `err` is a {@link LeaseholdError}, optionally with the given code. */
export function isLeaseholdError(err: unknown, code?: ErrorCode): err is LeaseholdError {
  return err instanceof LeaseholdError && (code === undefined || err.code === code);
}
