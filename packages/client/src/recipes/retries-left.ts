/**
 * Where a continuous claim worker keeps each task's retries left: the `retries_left` column of a
 * task table, decremented by every capture (`UPDATE … SET retries_left = retries_left - 1 WHERE
 * … AND retries_left <> 0`). Keep it in the task's own row so that every worker, in every
 * process, spends from one count; `fence` is the claim's fencing token for that task, for a store
 * that refuses writes from a claimer that lost its claim. The worker touches a task's entry only
 * while it holds the task's claim.
 */
export interface RetriesLeftStore {
  /**
   * Captures the task has left, or `undefined` if it was never captured (it then gets the worker's
   * `maxAttempts`). `-1` marks a task that was given up: it is never run or given up again.
   */
  get(taskId: string): number | undefined | Promise<number | undefined>;
  /** Store the captures left after one more capture, or `-1` once the task is given up. */
  set(taskId: string, retriesLeft: number, fence: number): void | Promise<void>;
  /** The task succeeded: forget its count (a finished task leaves the window and is never claimed again). */
  delete(taskId: string, fence: number): void | Promise<void>;
}

/**
 * The default {@link RetriesLeftStore}: a map in this process, shared by every worker started
 * over the same `WorkQueueClaims` object. Workers in other processes keep their own counts, so a
 * task failing on several machines may be tried up to `maxAttempts` times on each: give the
 * workers a store of your own where that matters. Entries of given-up tasks stay (so they stay
 * given up); succeeded ones are deleted.
 */
export class InMemoryRetriesLeft implements RetriesLeftStore {
  readonly #left = new Map<string, number>();

  get(taskId: string): number | undefined {
    return this.#left.get(taskId);
  }

  set(taskId: string, retriesLeft: number): void {
    this.#left.set(taskId, retriesLeft);
  }

  delete(taskId: string): void {
    this.#left.delete(taskId);
  }
}
