import { Semaphore } from "async-mutex";

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
   * @param maxShared - how many shared holders may hold at once. Default 1,024: enqueuers hold the
   *   lock only for a synchronous set insertion, so the bound is never reached in practice; it only
   *   has to be large enough that shared holders never queue behind each other.
   */
  constructor(maxShared = 1024) {
    this.#weight = maxShared;
    this.#semaphore = new Semaphore(maxShared);
  }

  /** Take the lock in shared mode. */
  async acquireShared(): Promise<Release> {
    const [, release] = await this.#semaphore.acquire(1);
    return release;
  }

  /** Take the lock in exclusive mode (waits for every earlier shared holder). */
  async acquireExclusive(): Promise<Release> {
    const [, release] = await this.#semaphore.acquire(this.#weight);
    return release;
  }
}
