import { LeaseholdError, LIMITS, type LockAcquiredResponse, type LockSpec } from "@leasehold/protocol";
import type { LockClient } from "../lock-client.js";
import type { LockOptions } from "../lock-options.js";
import type { WithLockResult } from "../with-lock.js";
import { HeldLock } from "./held-lock.js";

/** Options of a {@link JobSemaphore}. */
export interface JobSemaphoreOptions {
  /**
   * How many executions of the job may run at once (1..1,000,000). Required: there is no safe
   * default for how hard a downstream system may be pushed. 1 makes the job a singleton.
   */
  readonly limit: number;
}

/** Options of {@link JobSemaphore.start} and {@link JobSemaphore.run}. */
export interface JobStartOptions {
  /**
   * How long to wait for a permit, in ms. Default 0: answer granted or denied at once, as a batch
   * scheduler wants (it will try again on its next tick). Any length works.
   */
  readonly acquireTimeoutMs?: number | undefined;
  /**
   * The execution's own id, sent as the lock `requestId`: a retried start of the same execution
   * gets the same permit back instead of a second one. Default: a fresh id per call.
   */
  readonly executionId?: string | undefined;
  /** Abandons the wait (`CANCELLED`). Default: none. */
  readonly signal?: AbortSignal | undefined;
}

/** The answer of {@link JobSemaphore.start}. */
export type JobStart = { readonly status: "granted"; readonly permit: HeldLock } | { readonly status: "denied" };

function checkLimit(limit: number): number {
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > LIMITS.maxPermitLimit) {
    throw new LeaseholdError("INVALID_ARGUMENT", `limit must be an integer between 1 and ${LIMITS.maxPermitLimit} (got ${String(limit)})`, { path: "limit" });
  }
  return limit;
}

/**
 * A concurrency limit for a batch job across every process: at most `limit` executions hold a
 * permit at once. It replaces a token row locked `FOR UPDATE` whose tokens are handed out and
 * returned by each execution: here the server counts permits (`permit` mode), and a dead holder's
 * permit comes back on its own once its lease lapses, because nobody renews it.
 *
 * The limit is a live knob: {@link setLimit} changes what this process asks for, and the newest
 * request for the job sets the limit for everyone. Lowering it revokes nothing: running executions
 * finish, and new ones are granted only once fewer than the new limit hold.
 *
 * A permit can be lost while the job still runs (see {@link HeldLock}); then one more execution
 * than the limit may run for a while. Where that matters, have the downstream system check the
 * permit's fencing token.
 */
export class JobSemaphore {
  /** The job's name. */
  readonly job: string;
  readonly #client: LockClient;
  #limit: number;

  /** A semaphore for `job` (its permits live on the descriptor `job:<job>`) through `client`. */
  constructor(client: LockClient, job: string, options: JobSemaphoreOptions) {
    if (typeof job !== "string" || job.length === 0) throw new LeaseholdError("INVALID_ARGUMENT", "job must be a non-empty string", { path: "job" });
    this.#client = client;
    this.job = job;
    this.#limit = checkLimit(options.limit);
  }

  /** The descriptor every process uses for this job's permits. */
  get descriptor(): string {
    return `job:${this.job}`;
  }

  /** The limit this process sends with its next start. */
  get limit(): number {
    return this.#limit;
  }

  /**
   * Change the limit. It reaches the server with this process's next start (the server keeps the
   * newest limit it was sent), which is when it matters: a limit only governs new grants.
   */
  setLimit(limit: number): void {
    this.#limit = checkLimit(limit);
  }

  /**
   * Start an execution: `{ status: "granted", permit }` if fewer than `limit` executions hold a
   * permit (give it back with `permit.release()` when the execution completes), else
   * `{ status: "denied" }` — at once, or after `acquireTimeoutMs` of waiting in line.
   */
  async start(options: JobStartOptions = {}): Promise<JobStart> {
    const answer = await this.#client.lock(this.#specs(), this.#lockOptions(options));
    return answer.status === "acquired" ? { status: "granted", permit: new HeldLock(this.#client, answer) } : { status: "denied" };
  }

  /**
   * Run one execution under a permit and give it back afterwards, whether `fn` resolves or throws.
   * `fn`'s signal aborts when the permit is lost or about to lapse. `{ status: "timeout" }` means
   * denied: `fn` never ran.
   */
  run<T>(fn: (signal: AbortSignal, permit: LockAcquiredResponse) => Promise<T> | T, options: JobStartOptions = {}): Promise<WithLockResult<T>> {
    return this.#client.withLock(this.#specs(), this.#lockOptions(options), fn);
  }

  #specs(): LockSpec[] {
    return [{ descriptor: this.descriptor, mode: "permit", limit: this.#limit }];
  }

  #lockOptions(options: JobStartOptions): LockOptions {
    const { acquireTimeoutMs = 0, executionId, signal } = options;
    return { acquireTimeoutMs, ...(executionId !== undefined && { requestId: executionId }), ...(signal && { signal }), clientDescription: `job ${this.job}`.slice(0, 256) };
  }
}
