import { LeaseholdError } from "@leasehold/protocol";
import type { LockClient } from "../lock-client.js";
import type { SignalOptions } from "../lock-options.js";
import type { LockTimeout } from "../lock-result.js";
import { HeldLock } from "./held-lock.js";

/** Options of a {@link TimeoutLock}. */
export interface TimeoutLockOptions {
  /**
   * How long each acquisition keeps the lock, in ms, unless released earlier. Required: it is the
   * whole point of the lock (an hourly job holds it for an hour). Keep it under the client's
   * `maxTenureMs` (default 15 minutes), or the client's leaked-lock guard ends it earlier.
   */
  readonly holdMs: number;
}

/**
 * A timeout lock: whoever acquires it keeps it for `holdMs` with no need to release it, the
 * `UPDATE … SET ts = now WHERE ts + timeout < now` pattern. Here it is an `exclusive` lock on
 * `timeout:<name>` that this process keeps refreshed and then releases on its own after `holdMs`.
 *
 * Not the same as the SQL row in one respect: the interval lives in the holder's process. If the
 * holder dies, the lock comes free once its lease lapses (seconds), not after `holdMs`. To run
 * something at most once per interval even across crashes, also record the last run, with the
 * lock's fencing token, in your own store and check it under the lock.
 */
export class TimeoutLock {
  /** The lock's name. */
  readonly name: string;
  /** How long each acquisition holds. */
  readonly holdMs: number;
  readonly #client: LockClient;

  /** The timeout lock `name` (descriptor `timeout:<name>`), through `client`. */
  constructor(client: LockClient, name: string, options: TimeoutLockOptions) {
    if (!Number.isFinite(options.holdMs) || options.holdMs <= 0) {
      throw new LeaseholdError("INVALID_ARGUMENT", `holdMs must be a positive number (got ${String(options.holdMs)})`, { path: "holdMs" });
    }
    this.#client = client;
    this.name = name;
    this.holdMs = options.holdMs;
  }

  /** The descriptor of this lock. */
  get descriptor(): string {
    return `timeout:${this.name}`;
  }

  /**
   * Try once to acquire: the held lock, which lets itself go after `holdMs` (releasing it sooner,
   * by `release()` or the end of an `await using` scope, is allowed), or `{ status: "timeout" }`
   * while someone's interval is still running. It never waits: an interval lock that waited would
   * run late, not once per interval.
   */
  async tryAcquire(options: SignalOptions = {}): Promise<HeldLock | LockTimeout> {
    const answer = await this.#client.lock([{ descriptor: this.descriptor, mode: "exclusive" }], { ...(options.signal && { signal: options.signal }) });
    if (answer.status !== "acquired") return answer;
    const held = new HeldLock(this.#client, answer);
    // unref: a process that is otherwise done may exit; the lock then lapses with its lease.
    setTimeout(() => held.releaseInBackground(), this.holdMs).unref();
    return held;
  }
}
