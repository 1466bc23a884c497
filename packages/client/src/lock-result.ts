import type { AcquiredLock, Lease, LockAcquiredResponse, LockTimeoutResponse } from "@leasehold/protocol";

/**
 * The one answer for "the lock was not granted": from `lock`, `withLock` and every recipe
 * (`Mutex`, `JobSemaphore`, `TimeoutLock`, `WorkQueueClaims`, `StateTransitions`, `readLock`,
 * `writeLock`). Nothing is held, so disposing of it does nothing; it is disposable only so that
 * `await using r = await client.lock(…)` compiles and runs whichever way the call went.
 */
export type LockTimeout = LockTimeoutResponse & AsyncDisposable;

/** The shared, frozen {@link LockTimeout}: a timeout carries nothing, so every call returns this one. */
export const LOCK_TIMEOUT: LockTimeout = Object.freeze(
  Object.defineProperty({ status: "timeout" as const }, Symbol.asyncDispose, {
    // Non-enumerable: the answer still equals, prints and serialises as `{ status: "timeout" }`.
    value: (): Promise<void> => Promise.resolve(),
  }) as LockTimeout,
);

/**
 * A granted `lock()` answer: the protocol's `acquired` answer (same fields, same JSON) that can
 * also be released with `await using`. Leaving the scope waits for `unlock` of its token, once
 * (idempotent); once the client is closed it does nothing, since `close()` already stopped
 * refreshing it and it lapses with its lease. An `unlock` that fails rejects the disposal, as a
 * failed `unlock` call would (the lock then lapses with its lease).
 */
export class GrantedLock implements LockAcquiredResponse, AsyncDisposable {
  readonly status = "acquired" as const;
  /** The lock token: what `unlock`, `tryUnlock` and `refresh` take. */
  readonly token: string;
  /** The lease the server granted, counted from before the request was sent. */
  readonly lease: Lease;
  /** Every descriptor granted, with its fencing token, in ascending descriptor order. */
  readonly acquired: AcquiredLock[];
  readonly #release: (token: string) => Promise<unknown>;
  #disposed = false;

  /** Made by `LockClient.lock`; `release` unlocks a token and waits for the answer. */
  constructor(answer: LockAcquiredResponse, release: (token: string) => Promise<unknown>) {
    this.token = answer.token;
    this.lease = answer.lease;
    this.acquired = answer.acquired;
    this.#release = release;
  }

  /** Release the lock (see the class comment): what `await using` calls at the end of the scope. */
  async [Symbol.asyncDispose](): Promise<void> {
    if (this.#disposed) return;
    this.#disposed = true;
    await this.#release(this.token);
  }
}

/** What `LockClient.lock` resolves with. */
export type LockResult = GrantedLock | LockTimeout;
