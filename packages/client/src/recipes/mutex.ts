import type { LockClient } from "../lock-client.js";
import type { LockTimeout } from "../lock-result.js";
import { optionsThenFn } from "../options-then-fn.js";
import type { WithLockResult, WithLockWork } from "../with-lock.js";
import { HeldLock } from "./held-lock.js";

/** Options of {@link Mutex.lock} and {@link Mutex.runExclusive}. */
export interface MutexOptions {
  /**
   * How long to wait for the mutex, in ms. Default `Infinity`: wait in line (first in, first out)
   * until it is free, as async-mutex's `acquire` and `runExclusive` do and as code written for an
   * in-process mutex expects. Waiting is safe here because a holder that dies does not keep the
   * mutex: its lease lapses. `0` tries once, like the SQL `UPDATE … SET taken = true WHERE
   * taken = false` it replaces; any other length bounds the wait.
   */
  readonly acquireTimeoutMs?: number | undefined;
  /** Abandons the wait (`CANCELLED`), and aborts the work's signal once it runs. Default: none. */
  readonly signal?: AbortSignal | undefined;
}

/**
 * A named mutex: one `exclusive` lock on `mutex:<name>`. Unlike a boolean column, a holder that
 * dies does not leave it taken for ever: its lease lapses and the mutex comes free. As with every
 * lease-based lock it can be lost while the holder still works (see {@link HeldLock}); use the
 * fencing token where a second holder would do harm. Not reentrant.
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

  /**
   * Take the mutex, waiting for it by default: the held lock (release it, or let `await using`
   * release it), or `{ status: "timeout" }` if `acquireTimeoutMs` passed with another holder.
   */
  async lock(options: MutexOptions = {}): Promise<HeldLock | LockTimeout> {
    const answer = await this.#client.lock([{ descriptor: this.descriptor, mode: "exclusive" }], lockOptions(options));
    return answer.status === "acquired" ? new HeldLock(this.#client, answer) : answer;
  }

  /**
   * Run `fn` holding the mutex and release it afterwards, whether `fn` resolves or throws; waits
   * for the mutex by default (see {@link MutexOptions.acquireTimeoutMs}). Resolves `{ status:
   * "acquired", value }` with `fn`'s result, or `{ status: "timeout" }` when a bounded wait ran out
   * (then `fn` never ran). `fn`'s signal aborts when the mutex is lost or about to lapse.
   */
  runExclusive<T>(fn: WithLockWork<T>): Promise<WithLockResult<T>>;
  runExclusive<T>(options: MutexOptions, fn: WithLockWork<T>): Promise<WithLockResult<T>>;
  async runExclusive<T>(optionsOrFn: MutexOptions | WithLockWork<T>, work?: WithLockWork<T>): Promise<WithLockResult<T>> {
    const [options, fn] = optionsThenFn<MutexOptions, WithLockWork<T>>(optionsOrFn, work, "Mutex.runExclusive");
    return this.#client.withLock([{ descriptor: this.descriptor, mode: "exclusive" }], lockOptions(options), fn);
  }
}

function lockOptions({ acquireTimeoutMs = Number.POSITIVE_INFINITY, signal }: MutexOptions): { acquireTimeoutMs: number; signal?: AbortSignal | undefined } {
  return signal === undefined ? { acquireTimeoutMs } : { acquireTimeoutMs, signal };
}
