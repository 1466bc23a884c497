import type { Logger } from "pino";
import { isPermanentJoinError, joinErrorMessage } from "./join-errors.js";
import { realProcessClock, type ProcessClock } from "./process-clock.js";

/** First retry of joining after a transient failure, in ms; it doubles up to `maxDelayMs`. */
export const JOIN_RETRY_FIRST_MS = 250;

/** What {@link joinWithRetry} is given. */
export interface JoinRetryOptions {
  /** One attempt: create the tables if needed and check the shard count; answers the count. */
  readonly attempt: () => Promise<number>;
  /** How long the first attempt may run before the returned promise resolves anyway. */
  readonly firstWaitMs: number;
  /** Longest pause between attempts (the runtime gives its leader lease). */
  readonly maxDelayMs: number;
  readonly logger: Logger;
  /** True once the server stops: no more attempts, nothing reported. */
  readonly stopped: () => boolean;
  /** The cluster answered with its shard count. */
  readonly onJoined: (shards: number) => void;
  /** An attempt failed: why (for 503 answers), or `null` once one succeeded. */
  readonly onDown: (reason: string) => void;
  /** The process's timers. Default: Node's ({@link realProcessClock}). */
  readonly clock?: ProcessClock | undefined;
}

/** A join in progress. */
export interface JoinRetry {
  /**
   * Resolves once the first attempt succeeded, failed transiently, or ran `firstWaitMs`; rejects
   * when it failed for good (then nothing more happens).
   */
  readonly first: Promise<void>;
  /** Cancel the pending retry (an attempt in flight ends on its own; `stopped()` silences it). */
  cancel(): void;
  /**
   * Hear a failure that waiting cannot fix, met after {@link first} resolved. Called at once if it
   * already happened; without a handler it is only remembered.
   */
  onFatal(handler: (err: Error) => void): void;
}

/**
 * Join a cluster, retrying transient failures (see {@link isPermanentJoinError}) with backoff: from
 * 250 ms, doubling up to `maxDelayMs`, one `warn` line per failed attempt, so an unreachable
 * database never floods the log and the server joins by itself soon after it comes back.
 */
export function joinWithRetry(options: JoinRetryOptions): JoinRetry {
  const { logger, stopped } = options;
  const clock = options.clock ?? realProcessClock;
  let cancelRetry: (() => void) | null = null;
  let resolve!: () => void;
  let reject!: (err: Error) => void;
  const first = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  let settled = false;
  const finishFirst = (err?: Error): void => {
    if (settled) return;
    settled = true;
    cancelWait();
    if (err === undefined) resolve();
    else reject(err);
  };
  const cancelWait = clock.setTimer(() => finishFirst(), options.firstWaitMs);
  let fatal: Error | null = null;
  let fatalHandler: ((err: Error) => void) | null = null;
  let delay = JOIN_RETRY_FIRST_MS;
  const attempt = (): void => {
    cancelRetry = null;
    if (stopped()) return finishFirst();
    options.attempt().then(
      (shards) => {
        if (!stopped()) options.onJoined(shards);
        finishFirst();
      },
      (err: unknown) => {
        // Stopped meanwhile (closing the coordinator ends the attempt): nothing to report or retry.
        if (stopped()) return finishFirst();
        const error = err instanceof Error ? err : new Error(String(err));
        options.onDown(joinErrorMessage(err));
        if (isPermanentJoinError(err)) {
          if (!settled) return finishFirst(error);
          fatal = error;
          return fatalHandler?.(error);
        }
        finishFirst();
        logger.warn({ err, retryInMs: delay }, "could not reach the cluster's PostgreSQL to join; serving 503 meanwhile and retrying");
        cancelRetry = clock.setTimer(attempt, delay);
        delay = Math.min(delay * 2, Math.max(JOIN_RETRY_FIRST_MS, options.maxDelayMs));
      },
    );
  };
  attempt();
  return {
    first,
    cancel() {
      cancelRetry?.();
      cancelRetry = null;
    },
    onFatal(handler) {
      fatalHandler = handler;
      if (fatal !== null) handler(fatal);
    },
  };
}
