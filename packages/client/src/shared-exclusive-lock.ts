import { Semaphore } from "async-mutex";

const releaseOf = ([, release]: [number, Release]): Release => release;

/** Releases a held {@link SharedExclusiveLock}; calling it twice is harmless. */
export type Release = () => void;

/**
 * A fair shared/exclusive lock built on async-mutex's `Semaphore`: shared takes weight 1,
 * exclusive takes the full weight. The semaphore queues strictly first-in-first-out, so once an
 * exclusive taker is queued, later shared takers wait behind it: the one writer (the unlock flush)
 * is never starved by a stream of readers (enqueuers).
 */
export class SharedExclusiveLock {
  readonly #weight: number;
  readonly #semaphore: Semaphore;

  /**
   * @param maxShared - how many shared holders may hold at once, which is also the exclusive
   *   weight. Default 16. Enqueuers hold the lock only across one synchronous set insertion, so a
   *   17th concurrent enqueuer merely waits a microtask for the first to finish. The bound is kept
   *   small because async-mutex's `release` walks every weight from the semaphore's current value
   *   down to 1 looking for `waitForUnlock` waiters: at the old default of 1,024 that walk was a
   *   sixth of the client's CPU under 64 concurrent `tryUnlock` callers (see docs/benchmarks.md,
   *   "Profiles").
   */
  constructor(maxShared = 16) {
    this.#weight = maxShared;
    this.#semaphore = new Semaphore(maxShared);
  }

  /** Take the lock in shared mode. */
  acquireShared(): Promise<Release> {
    return this.#semaphore.acquire(1).then(releaseOf);
  }

  /** Take the lock in exclusive mode (waits for every earlier shared holder). */
  acquireExclusive(): Promise<Release> {
    return this.#semaphore.acquire(this.#weight).then(releaseOf);
  }
}
