import type { ErrorCode } from "@leasehold/protocol";

/** The kinds of bad input the suite generates; each is counted separately in the report. */
export const CATEGORIES = [
  "malformed-json",
  "invalid-utf8",
  "deep-nesting",
  "huge-arrays",
  "oversize-bodies",
  "wrong-types",
  "nulls",
  "unicode",
  "prototype-keys",
  "numbers",
  "oversize-descriptors",
  "content-types",
  "headers",
  "paths",
  "methods",
  "framing",
  "slow-bodies",
  "slow-headers",
] as const;

/** One of {@link CATEGORIES}. */
export type Category = (typeof CATEGORIES)[number];

/** What the server must answer to one generated case. */
export type Expectation =
  /** A protocol error: exactly this status and code, with an error body. */
  | { readonly kind: "error"; readonly status: number; readonly code: ErrorCode }
  /** Well-formed input that must not change anything either (unlock of unknown tokens): a 200. */
  | { readonly kind: "harmless" }
  /**
   * Input that breaks HTTP framing after the handler started (the body never completes): either
   * this error or a closed connection without an answer, never a 5xx and never a hang.
   */
  | { readonly kind: "error-or-close"; readonly status: number; readonly code: ErrorCode };

/** One generated request, ready to be written to a socket. */
export interface BadCase {
  readonly category: Category;
  /** A short human description, shown when a case fails. */
  readonly what: string;
  /** A sub-kind whose answers the report lists apart (the framing fault, for one). */
  readonly variant?: string | undefined;
  /** The bytes of the request; written one piece per write. */
  readonly pieces: readonly Buffer[];
  readonly expected: Expectation;
  /** Pause between pieces (slow clients). */
  readonly delayMs?: number | undefined;
  /** Half-close after writing (a client that sent everything it ever will). */
  readonly endAfterWrite?: boolean | undefined;
}

/** Shorthand for the expectation of a `400 INVALID_ARGUMENT`. */
export const INVALID: Expectation = { kind: "error", status: 400, code: "INVALID_ARGUMENT" };
/** Shorthand for `404 NOT_FOUND`. */
export const NOT_FOUND: Expectation = { kind: "error", status: 404, code: "NOT_FOUND" };
/** Shorthand for `405 METHOD_NOT_ALLOWED`. */
export const NOT_ALLOWED: Expectation = { kind: "error", status: 405, code: "METHOD_NOT_ALLOWED" };
/** Shorthand for `413 PAYLOAD_TOO_LARGE`. */
export const TOO_LARGE: Expectation = { kind: "error", status: 413, code: "PAYLOAD_TOO_LARGE" };
/** Shorthand for `415 UNSUPPORTED_MEDIA_TYPE`. */
export const UNSUPPORTED: Expectation = { kind: "error", status: 415, code: "UNSUPPORTED_MEDIA_TYPE" };
