import { setTimeout as sleep } from "node:timers/promises";
import { fullJitterBackoff } from "../full-jitter-backoff.js";
import { InMemoryRetriesLeft, type RetriesLeftStore } from "./retries-left.js";
import type { TaskClaim, WorkQueueClaims } from "./work-queue-claims.js";

/** Options of {@link runClaimWorker}. */
export interface ClaimWorkerOptions {
  /**
   * The window of candidate task ids to offer, read from your store each time: say the first 200
   * unfinished ones. An empty window means the queue is drained: the worker returns, or in
   * continuous mode idles. Make it comfortably larger than workers × `max`, so that a claim finds
   * free tasks among held ones.
   */
  readonly candidates: () => readonly string[] | Promise<readonly string[]>;
  /**
   * Process the claimed tasks and store their outcome before returning; the claim is released
   * after. Some claimed tasks may already be finished (the window was read before another worker
   * finished them): check and skip those. `signal` aborts when the claim is lost or the worker's
   * own `signal` aborts; give it and the claim's fencing tokens to the work.
   */
  readonly process: (taskIds: readonly string[], claim: TaskClaim, signal: AbortSignal) => Promise<void>;
  /** Tasks per claim. Default 10. */
  readonly max?: number | undefined;
  /**
   * How long one claim waits while every candidate is held by others, in ms. Default 1,000. The
   * server answers as soon as one comes free, so this is not a sleep; it only bounds how stale the
   * offered window may get before it is read again.
   */
  readonly waitMs?: number | undefined;
  /**
   * Stops the worker. In drain mode, between batches (the call rejects with the abort reason);
   * in continuous mode at once, wherever it is — idle, waiting for a claim, or between batches —
   * and the call resolves with its stats (a running `process` sees its `signal` abort and should
   * return). It also abandons a waiting claim. Default: none.
   */
  readonly signal?: AbortSignal | undefined;
  /**
   * Keep claiming instead of returning once the queue is drained (a worker that runs for the
   * life of the process). Default: off, drain mode. See {@link ContinuousClaimOptions}.
   */
  readonly continuous?: ContinuousClaimOptions | boolean | undefined;
}

/** Continuous mode of {@link runClaimWorker}: idling, retries, giving up. */
export interface ContinuousClaimOptions {
  /**
   * The first idle sleep's ceiling after the window came back empty, in ms; it doubles with each
   * empty read in a row. Default 50: new work is picked up quickly after a short lull.
   */
  readonly idleMinMs?: number | undefined;
  /**
   * The largest idle sleep, in ms. Default 5,000: an idle queue costs one window read per few
   * seconds per worker, and new work waits at most that long. Each sleep is drawn at random
   * below its ceiling (full jitter), so many idle workers do not read the store in step.
   */
  readonly idleMaxMs?: number | undefined;
  /**
   * Captures a task gets before it is given up, the first included. Default 3: a passing fault
   * (a timeout, a restart) gets two more tries; a task that fails every time stops costing work
   * after three. A failed `process` call spends one capture of each task it was given.
   */
  readonly maxAttempts?: number | undefined;
  /**
   * Where each task's captures left are kept. Default: an {@link InMemoryRetriesLeft} shared by
   * the workers of this `WorkQueueClaims` object in this process. Keep it in the task rows when
   * workers run in several processes.
   */
  readonly retriesLeft?: RetriesLeftStore | undefined;
  /**
   * Called, under the task's claim, when a task is given up: record it (say, `status = 'failed'`)
   * so that it leaves the candidates window. `error` is the last failure, `undefined` when the
   * task came back with no captures left (its last worker died). Called once per task: the
   * retries-left store marks it given up (`-1`). Default: none — then the task stays in your
   * window, and claims of it are skipped without running it.
   */
  readonly onGiveUp?: ((taskId: string, error: unknown, claim: TaskClaim) => void | Promise<void>) | undefined;
  /** Called with each failure of `process` (the worker goes on). Default: none. */
  readonly onError?: ((error: unknown, taskIds: readonly string[]) => void) | undefined;
  /** Random source of the idle jitter, a number in [0, 1). Default `Math.random`; for tests. */
  readonly random?: (() => number) | undefined;
}

/** What one worker did. */
export interface ClaimWorkerStats {
  /** Claims granted (batches). */
  readonly batches: number;
  /** Task ids handed to `process`, including any it skipped as already finished. */
  readonly tasks: number;
  /** `process` calls that threw (continuous mode; in drain mode the first one ends the worker). */
  readonly failures: number;
  /** Tasks given up after `maxAttempts` captures (continuous mode). */
  readonly givenUp: number;
}

type Counts = { -readonly [K in keyof ClaimWorkerStats]: ClaimWorkerStats[K] };

/** Captures left of a task that was given up (0 means its last capture is spent, outcome unknown). */
const GIVEN_UP = -1;

const defaultStores = new WeakMap<WorkQueueClaims, RetriesLeftStore>();

/**
 * A queue reader: claim a batch, process it, release it, and claim the next one at once — no
 * sleep while work is available, as the `WHILE 1=1 … UPDATE TOP (1) … READPAST` loop does, and
 * no polling when it is not: a claim that finds everything held waits on the server until
 * something comes free.
 *
 * Drain mode (the default) returns when `candidates` is empty; if `process` throws, the claim is
 * released and the error rethrown. Continuous mode (`continuous: true` or its options) never
 * returns on its own: an empty window makes it sleep with a jittered, bounded backoff and read
 * again; a failed `process` is counted and its tasks, released, are retried by whichever worker
 * claims them next, until they have had `maxAttempts` captures, then given up (`onGiveUp`); it
 * resolves with its stats once `signal` aborts. Errors of `candidates` and `onGiveUp` end it.
 */
export async function runClaimWorker(claims: WorkQueueClaims, options: ClaimWorkerOptions): Promise<ClaimWorkerStats> {
  const { max = 10, waitMs = 1_000, signal, continuous } = options;
  const mode = continuous === undefined || continuous === false ? undefined : continuous === true ? {} : continuous;
  const stats: Counts = { batches: 0, tasks: 0, failures: 0, givenUp: 0 };
  if (mode === undefined) {
    for (;;) {
      signal?.throwIfAborted();
      const candidates = await options.candidates();
      if (candidates.length === 0) return stats;
      const claim = await claims.claim(candidates, { max, acquireTimeoutMs: waitMs, ...(signal && { signal }) });
      if (claim.status === "timeout") continue;
      stats.batches++;
      stats.tasks += claim.taskIds.length;
      try {
        await options.process(claim.taskIds, claim, workSignal(claim, signal));
      } finally {
        claim.releaseInBackground();
      }
    }
  }
  const worker = new ContinuousWorker(claims, options, mode, stats);
  try {
    await worker.run(max, waitMs);
  } catch (err) {
    if (!signal?.aborted) throw err; // stopping abandons a claim or a sleep with an abort error
  }
  return { ...stats };
}

function workSignal(claim: TaskClaim, stop: AbortSignal | undefined): AbortSignal {
  return stop === undefined ? claim.signal : AbortSignal.any([claim.signal, stop]);
}

/** The state of one continuous worker. */
class ContinuousWorker {
  readonly #claims: WorkQueueClaims;
  readonly #options: ClaimWorkerOptions;
  readonly #mode: ContinuousClaimOptions;
  readonly #stats: Counts;
  readonly #left: RetriesLeftStore;
  readonly #maxAttempts: number;

  constructor(claims: WorkQueueClaims, options: ClaimWorkerOptions, mode: ContinuousClaimOptions, stats: Counts) {
    this.#claims = claims;
    this.#options = options;
    this.#mode = mode;
    this.#stats = stats;
    this.#maxAttempts = mode.maxAttempts ?? 3;
    if (!Number.isSafeInteger(this.#maxAttempts) || this.#maxAttempts < 1) {
      throw new RangeError(`continuous.maxAttempts must be a positive integer (got ${String(mode.maxAttempts)})`);
    }
    let store = mode.retriesLeft ?? defaultStores.get(claims);
    if (store === undefined) defaultStores.set(claims, (store = new InMemoryRetriesLeft()));
    this.#left = store;
  }

  async run(max: number, waitMs: number): Promise<void> {
    const { signal } = this.#options;
    const { idleMinMs = 50, idleMaxMs = 5_000, random } = this.#mode;
    let emptyReads = 0;
    while (!signal?.aborted) {
      const candidates = await this.#options.candidates();
      if (candidates.length === 0) {
        emptyReads++;
        await sleep(fullJitterBackoff(emptyReads, { baseMs: idleMinMs, capMs: idleMaxMs, random }), undefined, signal && { signal });
        continue;
      }
      emptyReads = 0;
      const claim = await this.#claims.claim(candidates, { max, acquireTimeoutMs: waitMs, ...(signal && { signal }) });
      // All held: the claim already waited on the server; read the window again at once.
      if (claim.status === "timeout") continue;
      try {
        await this.#batch(claim);
      } finally {
        claim.releaseInBackground();
      }
    }
  }

  /** Spend one capture of each claimed task, give up those with none left, process the rest. */
  async #batch(claim: TaskClaim): Promise<void> {
    this.#stats.batches++;
    const runnable: string[] = [];
    const leftBefore: number[] = [];
    for (const id of claim.taskIds) {
      const left = (await this.#left.get(id)) ?? this.#maxAttempts;
      if (left < 0) continue; // given up already; this worker's window was read before that
      if (left === 0) await this.#giveUp(id, undefined, claim);
      else {
        await this.#left.set(id, left - 1, claim.taskFence(id));
        runnable.push(id);
        leftBefore.push(left);
      }
    }
    if (runnable.length === 0) return;
    this.#stats.tasks += runnable.length;
    const stop = this.#options.signal;
    try {
      await this.#options.process(runnable, claim, workSignal(claim, stop));
    } catch (err) {
      if (stop?.aborted) {
        // Stopping the worker is not the tasks' fault: give the captures back.
        for (const [i, id] of runnable.entries()) await this.#left.set(id, leftBefore[i]!, claim.taskFence(id));
        return;
      }
      this.#stats.failures++;
      this.#mode.onError?.(err, runnable);
      // Tasks whose last capture this was are given up now, while the claim still holds them.
      for (const id of runnable) if ((await this.#left.get(id)) === 0) await this.#giveUp(id, err, claim);
      return;
    }
    for (const id of runnable) await this.#left.delete(id, claim.taskFence(id));
  }

  /** Give a task up, once: `-1` captures left marks it, so a stale window's claim skips it. */
  async #giveUp(taskId: string, error: unknown, claim: TaskClaim): Promise<void> {
    await this.#left.set(taskId, GIVEN_UP, claim.taskFence(taskId));
    this.#stats.givenUp++;
    await this.#mode.onGiveUp?.(taskId, error, claim);
  }
}
