import type { SignalOptions } from "../lock-options.js";
import type { LockTimeout } from "../lock-result.js";
import type { ClaimOptions, TaskClaim, WorkQueueClaims } from "./work-queue-claims.js";

/** A task's stored state: its status and how many more captures it may have. */
export interface TaskState {
  readonly status: string;
  /** Captures left; each capture takes one. `Infinity` for no limit. */
  readonly retriesLeft: number;
}

/**
 * Where task states live: your own table or map. The recipe only reads and writes a task while it
 * holds that task's lock; `fence` is the lock's fencing token, for a store that can refuse writes
 * from a holder that lost its lock.
 */
export interface TaskStateStore {
  get(taskId: string): Promise<TaskState | undefined> | TaskState | undefined;
  set(taskId: string, state: TaskState, fence: number): Promise<void> | void;
}

/** Options of {@link StateTransitions}. */
export interface StateTransitionOptions {
  /** Statuses a task may be captured from. Default `["done", "failed"]`: finished runs may run again. */
  readonly startable?: readonly string[] | undefined;
}

/**
 * Tasks captured for one run. Finish each, then release the claim (`claim.release()`, or let
 * `await using` do it: disposing of the capture releases its claim).
 */
export interface CapturedTasks extends AsyncDisposable {
  /** Always `"acquired"`: tells a capture from the `{ status: "timeout" }` answer. */
  readonly status: "acquired";
  /** The tasks this capture may run (eligible and now one retry poorer). */
  readonly taskIds: readonly string[];
  /** The claim holding them (and any ineligible candidates it happened to take). */
  readonly claim: TaskClaim;
  /** Store the outcome of one captured task, e.g. `"done"` or `"failed"`; the claim still holds it. */
  finish(taskId: string, status: string, options?: SignalOptions): Promise<void>;
}

/**
 * State transitions with retries left, over named queues: the SQL
 * `UPDATE task SET status = 'in_progress', retries_left = retries_left - 1 WHERE id IN (SELECT id
 * … WHERE queue_id = $1 AND status IN ('done','failed') AND retries_left <> 0 LIMIT 3)`.
 * "In progress" is the held claim itself, not a stored status: a worker that dies mid-run
 * cannot leave a task stuck in progress, its claim lapses with its lease. The queue is the
 * {@link WorkQueueClaims}' name, so equal task ids in two queues never conflict.
 *
 * Capturing checks and decrements `retriesLeft` under the lock, so two workers can never both
 * spend the same retry. Offer candidates you already believe eligible: an ineligible one that is
 * claimed takes a slot of `max` and is skipped.
 */
export class StateTransitions {
  readonly #claims: WorkQueueClaims;
  readonly #store: TaskStateStore;
  readonly #startable: ReadonlySet<string>;

  /** Transitions of the tasks in `store`, claimed through `claims` (whose name is the queue's). */
  constructor(claims: WorkQueueClaims, store: TaskStateStore, options: StateTransitionOptions = {}) {
    this.#claims = claims;
    this.#store = store;
    this.#startable = new Set(options.startable ?? ["done", "failed"]);
  }

  /**
   * Capture up to `max` (default 10) of `candidates` that no one holds, whose status is startable
   * and that have retries left. `{ status: "timeout" }` when none could be claimed; an empty
   * `taskIds` when the claimed ones were all ineligible (the claim is then already released).
   */
  async capture(candidates: readonly string[], options: ClaimOptions = {}): Promise<CapturedTasks | LockTimeout> {
    const claim = await this.#claims.claim(candidates, options);
    if (claim.status === "timeout") return claim;
    const taskIds: string[] = [];
    try {
      for (const id of claim.taskIds) {
        const state = await this.#store.get(id);
        if (state === undefined || !this.#startable.has(state.status) || !(state.retriesLeft > 0)) continue;
        await this.#store.set(id, { ...state, retriesLeft: state.retriesLeft - 1 }, claim.taskFence(id));
        taskIds.push(id);
      }
    } catch (err) {
      claim.releaseInBackground();
      throw err;
    }
    if (taskIds.length === 0) claim.releaseInBackground();
    const store = this.#store;
    return {
      status: "acquired",
      taskIds,
      claim,
      [Symbol.asyncDispose]: () => claim[Symbol.asyncDispose](),
      async finish(taskId: string, status: string, options: SignalOptions = {}): Promise<void> {
        options.signal?.throwIfAborted();
        const state = await store.get(taskId);
        await store.set(taskId, { retriesLeft: state?.retriesLeft ?? 0, status }, claim.taskFence(taskId));
      },
    };
  }
}
