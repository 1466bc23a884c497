import type { LockAcquiredResponse } from "@leasehold/protocol";
import type { LockClient } from "../lock-client.js";
import type { WithLockResult } from "../with-lock.js";
import { HeldLock } from "./held-lock.js";

/** Options of {@link Mutex.lock} and {@link Mutex.run}. */
export interface MutexOptions {
  /**
   * How long to wait for the mutex, in ms. Default 0: try once, like the SQL
   * `UPDATE … SET acquired = true WHERE acquired = false` it replaces. Any length works.
   */
  readonly acquireTimeoutMs?: number | undefined;
  /** Abandons the wait (`CANCELLED`). Default: none. */
  readonly signal?: AbortSignal | undefined;
}

/**
 * A named mutex: one `exclusive` lock on `mutex:<name>`. Unlike a boolean column, a holder that
 * dies does not leave it taken for ever: its lease lapses and the mutex comes free. As with every
 * lease-based lock it can be lost while the holder still works (see {@link HeldLock}); use the
 * fencing token where a second holder would do harm.
 */
export class Mutex {
  /** The mutex's name. */
  readonly name: string;
  readonly #client: LockClient;

  /** The mutex `name` (descriptor `mutex:<name>`), through `client`. */
  constructor(client: LockClient, name: string) {
    this.#client = client;
    this.name = name;
  }

  /** The descriptor of this mutex. */
  get descriptor(): string {
    return `mutex:${this.name}`;
  }

  /** Take the mutex: the held lock (release it when done), or `undefined` if another holder has it. */
  async lock(options: MutexOptions = {}): Promise<HeldLock | undefined> {
    const { acquireTimeoutMs = 0, signal } = options;
    const answer = await this.#client.lock([{ descriptor: this.descriptor, mode: "exclusive" }], { acquireTimeoutMs, ...(signal && { signal }) });
    return answer.status === "acquired" ? new HeldLock(this.#client, answer) : undefined;
  }

  /**
   * Run `fn` holding the mutex and release it afterwards. `{ status: "timeout" }`: someone else
   * held it (at once, or for `acquireTimeoutMs`), and `fn` never ran.
   */
  run<T>(fn: (signal: AbortSignal, lock: LockAcquiredResponse) => Promise<T> | T, options: MutexOptions = {}): Promise<WithLockResult<T>> {
    const { acquireTimeoutMs = 0, signal } = options;
    return this.#client.withLock([{ descriptor: this.descriptor, mode: "exclusive" }], { acquireTimeoutMs, ...(signal && { signal }) }, fn);
  }
}
