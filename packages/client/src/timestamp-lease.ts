import type { Lease, TimestampLeaseResponse } from "@leasehold/protocol";

/**
 * A held timestamp lease (`LockClient.acquireTimestampLease`): `leased` is held under its name
 * until released, so `minLeasedTimestamp(name)` answers no more than it. The client's refresher
 * keeps its token alive like a lock's, and reports it on `lostLocks` if the server lets it go.
 * Release it with `await using` (or {@link release}): leaving the scope waits for `unlock`.
 * Like a lock, a lease can be lost while work still relies on it (a long pause, a partition).
 */
export class TimestampLease implements AsyncDisposable {
  /** The token holding the lease: what `unlock`, `tryUnlock` and `refresh` take. */
  readonly token: string;
  /** The lease the server granted, counted from before the request was sent. */
  readonly lease: Lease;
  /** The timestamp held under the name. */
  readonly leased: number;
  /** The smallest timestamp held under the name when this lease was granted (≤ `leased`). */
  readonly minLeased: number;
  /** `count` fresh timestamps above `leased`: `[start, start + count)`. */
  readonly timestamps: { readonly start: number; readonly count: number };
  readonly #release: (token: string) => Promise<unknown>;
  #released = false;

  /** Made by `LockClient.acquireTimestampLease`; `release` unlocks a token and waits for the answer. */
  constructor(answer: TimestampLeaseResponse, release: (token: string) => Promise<unknown>) {
    this.token = answer.token;
    this.lease = answer.lease;
    this.leased = answer.leased;
    this.minLeased = answer.minLeased;
    this.timestamps = answer.timestamps;
    this.#release = release;
  }

  /** Release the lease and wait for the `unlock` answer; idempotent. */
  async release(): Promise<void> {
    if (this.#released) return;
    this.#released = true;
    await this.#release(this.token);
  }

  /** {@link release}, for `await using lease = await client.acquireTimestampLease(…)`. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.release();
  }
}
