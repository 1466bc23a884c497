/**
 * Runs tasks one at a time in submission order: the single-threaded executor of AtlasDB's
 * unlocker. A task's failure never stops later tasks; `idle()` resolves once every task submitted
 * so far has settled, which is what `close()` needs to flush.
 */
export class SerialExecutor {
  #tail: Promise<void> = Promise.resolve();
  #running = 0;

  /** Queue `task` behind every earlier one. Errors must be handled by the task itself. */
  submit(task: () => Promise<void>): void {
    this.#running++;
    this.#tail = this.#tail
      .then(task)
      .catch(() => undefined)
      .finally(() => {
        this.#running--;
      });
  }

  /** How many tasks are queued or running. */
  get pending(): number {
    return this.#running;
  }

  /** Resolves when every task submitted before the call (and any they submitted) has settled. */
  async idle(): Promise<void> {
    while (this.#running > 0) await this.#tail;
  }
}
