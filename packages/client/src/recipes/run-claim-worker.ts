import type { TaskClaim, WorkQueueClaims } from "./work-queue-claims.js";

/** Options of {@link runClaimWorker}. */
export interface ClaimWorkerOptions {
  /**
   * The window of candidate task ids to offer, read from your store each time: say the first 200
   * unfinished ones. An empty window means the queue is drained and the worker returns. Make it
   * comfortably larger than workers × `max`, so that a claim finds free tasks among held ones.
   */
  readonly candidates: () => readonly string[] | Promise<readonly string[]>;
  /**
   * Process the claimed tasks and store their outcome before returning; the claim is released
   * after. Some claimed tasks may already be finished (the window was read before another worker
   * finished them): check and skip those. Give the claim's signal and fencing tokens to the work.
   */
  readonly process: (taskIds: readonly string[], claim: TaskClaim) => Promise<void>;
  /** Tasks per claim. Default 10. */
  readonly max?: number | undefined;
  /**
   * How long one claim waits while every candidate is held by others, in ms. Default 1,000. The
   * server answers as soon as one comes free, so this is not a sleep; it only bounds how stale the
   * offered window may get before it is read again.
   */
  readonly waitMs?: number | undefined;
  /** Stops the worker between batches, and abandons a waiting claim (`CANCELLED`). Default: none. */
  readonly signal?: AbortSignal | undefined;
}

/** What one worker did. */
export interface ClaimWorkerStats {
  /** Claims granted (batches). */
  readonly batches: number;
  /** Task ids handed to `process`, including any it skipped as already finished. */
  readonly tasks: number;
}

/**
 * A queue reader: claim a batch, process it, release it, and claim the next one at once — no
 * sleep while work is available, as the `WHILE 1=1 … UPDATE TOP (1) … READPAST` loop does, and
 * no polling when it is not: a claim that finds everything held waits on the server until
 * something comes free. Returns when `candidates` is empty. If `process` throws, the claim is
 * released and the error rethrown.
 */
export async function runClaimWorker(claims: WorkQueueClaims, options: ClaimWorkerOptions): Promise<ClaimWorkerStats> {
  const { max = 10, waitMs = 1_000, signal } = options;
  let batches = 0;
  let tasks = 0;
  for (;;) {
    signal?.throwIfAborted();
    const candidates = await options.candidates();
    if (candidates.length === 0) return { batches, tasks };
    const claim = await claims.claim(candidates, { max, acquireTimeoutMs: waitMs, ...(signal && { signal }) });
    if (claim === undefined) continue;
    batches++;
    tasks += claim.taskIds.length;
    try {
      await options.process(claim.taskIds, claim);
    } finally {
      claim.releaseInBackground();
    }
  }
}
