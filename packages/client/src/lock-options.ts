import type { LockBehavior, StartedTransaction } from "@leasehold/protocol";

/** Options of `LockClient.lock` and `LockClient.withLock`. */
export interface LockOptions {
  /**
   * How long to wait for the locks, in ms. Default 0: do not wait (try once). Any length works,
   * including `Infinity`: waits longer than the protocol's 60 s per request are split into long
   * polls of at most 60 s, each re-sent with the same `requestId` until the total deadline (a poll
   * that timed out has left the server's queues, so the next one queues again).
   */
  readonly acquireTimeoutMs?: number | undefined;
  /** `all-or-none` (default: every lock or nothing) or `as-many-as-possible` (work-queue claims). */
  readonly behavior?: LockBehavior | undefined;
  /** With `as-many-as-possible`, take at most this many. Default: all. */
  readonly max?: number | undefined;
  /**
   * Makes the request safely retryable: the server answers a retry with the same outcome and never
   * acquires twice. Default: a fresh one per call (the client's random 96-bit prefix and a counter),
   * so the transport may retry every lock call across connection failures. Pass your own to make retries across process restarts safe.
   */
  readonly requestId?: string | undefined;
  /**
   * Aborts the wait. Whatever was acquired is released; if a grant races with the abort, the
   * granted token is released too. The call rejects with `LeaseholdError("CANCELLED")`. Default: none.
   */
  readonly signal?: AbortSignal | undefined;
  /** Free text the server may show in its diagnostics (up to 256 characters). Default: none. */
  readonly clientDescription?: string | undefined;
}

/** Options of calls that only take a signal. */
export interface SignalOptions {
  /** Abandons the caller's wait (`CANCELLED`). Default: none. */
  readonly signal?: AbortSignal | undefined;
}

/** One started transaction with what the server answered around it. */
export interface StartedTransactionInfo extends StartedTransaction {
  /** The namespace's immutable timestamp when it started (≤ `startTimestamp`). */
  readonly immutableTimestamp: number;
}
