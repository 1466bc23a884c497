import type { AcquiredLock, LockAcquiredResponse } from "@leasehold/protocol";
import { LeaseholdError } from "@leasehold/protocol";
import type { LockClient } from "../lock-client.js";
import type { SignalOptions } from "../lock-options.js";
import { GrantedLock } from "../lock-result.js";

/**
 * A granted lock request that outlives one function call: a job permit taken at start and given
 * back at completion, a batch of claimed tasks, a mutex or timeout lock. The client's refresher
 * keeps it alive until {@link HeldLock.release}, or the end of an `await using` scope. Its
 * `status` is `"acquired"`, so a recipe's answer is this handle or the shared `{ status:
 * "timeout" }`, as `lock`'s is:
 *
 * ```ts
 * await using held = await mutex.lock({ acquireTimeoutMs: 5_000 });
 * if (held.status === "timeout") return;
 * await rebuild({ signal: held.signal, fence: held.fencingToken() }); // released at the end of the scope
 * ```
 *
 * **It can be lost while work still runs** (a long pause, a partition, a server restart):
 * `signal` aborts as soon as the client learns of it, but it cannot recall a write already sent.
 * Give the resource you write to a {@link HeldLock.fencingToken} and have it refuse tokens lower
 * than the highest it has seen. For work that fits in one function, prefer the recipes' `run`
 * methods: they use `withLock`, whose signal also fires a margin before a lease that is not being
 * renewed would lapse.
 */
export class HeldLock implements AsyncDisposable {
  /** Always `"acquired"`: tells a handle from the `{ status: "timeout" }` answer. */
  readonly status = "acquired" as const;
  /** The lock token: the only way to refresh or release what this request holds. */
  readonly token: string;
  /** Every descriptor granted, with its fencing token, in the server's (ascending) order. */
  readonly acquired: readonly AcquiredLock[];
  readonly #client: LockClient;
  /** The grant this wraps, when it came from `client.lock`: its disposal is the client's. */
  readonly #grant: GrantedLock | undefined;
  readonly #lost = new AbortController();
  readonly #subscription: { unsubscribe(): void };
  #released = false;

  /** Wraps the `acquired` answer of `client.lock`; recipes make these, callers rarely need to. */
  constructor(client: LockClient, answer: LockAcquiredResponse) {
    this.#client = client;
    this.#grant = answer instanceof GrantedLock ? answer : undefined;
    this.token = answer.token;
    this.acquired = answer.acquired;
    this.#subscription = client.lostLocks.subscribe({
      next: (event) => {
        if (event.token !== this.token || this.#lost.signal.aborted) return;
        const reason = new LeaseholdError("UNAVAILABLE", `the lock is no longer held (${event.reason}); stop the work`, { reason: event.reason });
        this.#lost.abort(reason);
      },
    });
  }

  /** Aborts once the client learns this lock is lost (see the class comment for what that does not cover). */
  get signal(): AbortSignal {
    return this.#lost.signal;
  }

  /** Whether `release` or `releaseInBackground` was called. */
  get released(): boolean {
    return this.#released;
  }

  /**
   * The fencing token of `descriptor` (default: the first granted). It is greater than every
   * fencing token handed out for that descriptor before, so a store that remembers the highest it
   * has seen can refuse writes from a holder that lost the lock. Throws if it was not granted.
   */
  fencingToken(descriptor?: string): number {
    const lock = descriptor === undefined ? this.acquired[0] : this.acquired.find((a) => a.descriptor === descriptor);
    if (lock === undefined) {
      throw new LeaseholdError("INVALID_ARGUMENT", `no fencing token: ${descriptor === undefined ? "nothing" : "that descriptor"} was granted to this lock`, {
        path: "descriptor",
      });
    }
    return lock.fencingToken;
  }

  /**
   * Give the lock back and wait for the server's answer. Resolves `true` if it was still held
   * (so nobody else could have had it meanwhile), `false` if it had already been lost or
   * released. Idempotent.
   */
  async release(options: SignalOptions = {}): Promise<boolean> {
    if (this.#released) return false;
    this.#stopWatching();
    const unlocked = await this.#client.unlock([this.token], options);
    return unlocked.includes(this.token);
  }

  /**
   * {@link release}, for `await using`, with the disposal rules of a `lock()` grant: waits for the
   * server's answer; does nothing if the lock was already released (by `release`,
   * `releaseInBackground` or an earlier disposal) or the client is closed (the lock then lapses
   * with its lease). A failed unlock call rejects, as `release` does.
   */
  async [Symbol.asyncDispose](): Promise<void> {
    if (this.#released) return;
    if (this.#grant === undefined) {
      await this.release();
      return;
    }
    this.#stopWatching();
    await this.#grant[Symbol.asyncDispose]();
  }

  /**
   * Give the lock back without waiting (the client's batched `tryUnlock`): for hot paths where
   * nobody needs to know the answer. A failed release leaves the lock to lapse with its lease.
   */
  releaseInBackground(): void {
    if (this.#released) return;
    this.#stopWatching();
    this.#client.tryUnlock([this.token]);
  }

  #stopWatching(): void {
    this.#released = true;
    this.#subscription.unsubscribe();
  }
}
