import { LeaseholdError, LIMITS, rowLock, type LockAcquiredResponse } from "@leasehold/protocol";
import type { LockClient } from "../lock-client.js";
import { LOCK_TIMEOUT, type LockTimeout } from "../lock-result.js";
import { HeldLock } from "./held-lock.js";

/** Options of {@link WorkQueueClaims.claim}. */
export interface ClaimOptions {
  /** Claim at most this many tasks (1..10,000). Default 10: a batch small enough to finish well inside a lease. */
  readonly max?: number | undefined;
  /**
   * How long to wait when every candidate is claimed by someone else, in ms. Default 0: answer
   * `{ status: "timeout" }` at once. With a wait, the claim is answered as soon as any candidate comes free,
   * with what is free at that moment — no polling, no sleep.
   */
  readonly acquireTimeoutMs?: number | undefined;
  /** Abandons the wait (`CANCELLED`). Default: none. */
  readonly signal?: AbortSignal | undefined;
}

/**
 * Tasks claimed by one worker, held under one lock token. Release the claim only after the tasks'
 * outcome is stored, so the next claimer of a task sees it finished.
 */
export class TaskClaim extends HeldLock {
  /** The claimed task ids, in the order the server granted them (ascending by descriptor). */
  readonly taskIds: readonly string[];
  readonly #fences: ReadonlyMap<string, number>;

  /** Wraps a claim's answer; `idOf` maps each offered descriptor back to its task id. */
  constructor(client: LockClient, answer: LockAcquiredResponse, idOf: ReadonlyMap<string, string>) {
    super(client, answer);
    const fences = new Map<string, number>();
    for (const lock of answer.acquired) {
      const id = idOf.get(lock.descriptor);
      if (id === undefined) throw new LeaseholdError("BAD_RESPONSE", "the server granted a task that was not offered");
      fences.set(id, lock.fencingToken);
    }
    this.taskIds = [...fences.keys()];
    this.#fences = fences;
  }

  /** The fencing token of one claimed task, for a store that refuses stale claimers. */
  taskFence(taskId: string): number {
    const fence = this.#fences.get(taskId);
    if (fence === undefined) throw new LeaseholdError("INVALID_ARGUMENT", "that task is not part of this claim", { path: "taskId" });
    return fence;
  }
}

/**
 * Work-queue claims: the `UPDATE TOP (n) … WITH (READPAST)` / `SELECT … FOR UPDATE SKIP LOCKED`
 * of a task table, over `as-many-as-possible`. A worker offers a window of candidate task ids
 * (say the first 200 unfinished ones from its own store) and is granted, at once, up to `max` of
 * them that no other worker holds, skipping the held ones instead of queueing behind them.
 *
 * Guarantees: no two live claims hold the same task; a crashed worker's tasks become claimable
 * again once its lease lapses. Not guaranteed: that a claimed task is still unfinished (the
 * window may be stale: someone may have finished and released it since you read it), so check
 * the task's state after claiming and skip finished ones; and that a claim is not lost while its
 * tasks run (see {@link HeldLock}), so make processing idempotent or fence it with
 * {@link TaskClaim.taskFence}. The queue itself — what exists, what is done — lives in your store.
 */
export class WorkQueueClaims {
  /** The queue's name: the table part of every task descriptor, so queues never collide. */
  readonly queue: string;
  readonly #client: LockClient;

  /** Claims on the tasks of `queue`, through `client`. */
  constructor(client: LockClient, queue: string) {
    this.#client = client;
    this.queue = queue;
    this.taskDescriptor("probe"); // fail fast on a bad queue name
  }

  /** The descriptor that stands for one task of this queue. */
  taskDescriptor(taskId: string): string {
    return rowLock(this.queue, taskId);
  }

  /**
   * Claim up to `max` of `candidates` that nobody else holds. Resolves the claim (a
   * {@link TaskClaim}, `status: "acquired"`; `await using` releases it), or `{ status: "timeout" }`
   * when none could be taken (at once, or after `acquireTimeoutMs`) or `candidates` is empty.
   */
  async claim(candidates: readonly string[], options: ClaimOptions = {}): Promise<TaskClaim | LockTimeout> {
    const { max = 10, acquireTimeoutMs = 0, signal } = options;
    if (!Number.isSafeInteger(max) || max < 1 || max > LIMITS.maxLocksPerRequest) {
      throw new LeaseholdError("INVALID_ARGUMENT", `max must be an integer between 1 and ${LIMITS.maxLocksPerRequest} (got ${String(max)})`, { path: "max" });
    }
    const idOf = new Map<string, string>();
    for (const id of candidates) idOf.set(this.taskDescriptor(id), id);
    if (idOf.size === 0) return LOCK_TIMEOUT;
    const locks = [...idOf.keys()].map((descriptor) => ({ descriptor, mode: "exclusive" as const }));
    const answer = await this.#client.lock(locks, { behavior: "as-many-as-possible", max, acquireTimeoutMs, ...(signal && { signal }) });
    return answer.status === "acquired" ? new TaskClaim(this.#client, answer, idOf) : answer;
  }
}
