import { LeaseholdError, LIMITS, onAbort, type LockService } from "@leasehold/protocol";
import { cancelledBy } from "./cancelled-by.js";
import type { Logger } from "./logger.js";
import { chunks } from "./chunks.js";
import { clientChannels, clientMessages, errorCode } from "./client-diagnostics.js";
import type { ClientStats } from "./client-stats.js";
import { SerialExecutor } from "./serial-executor.js";
import { SharedExclusiveLock } from "./shared-exclusive-lock.js";

/** What the {@link AsyncUnlocker} needs; every field is supplied by `LockClient`. */
export interface AsyncUnlockerOptions {
  /** Where unlock calls go; only `unlock` is used. */
  readonly service: Pick<LockService, "unlock">;
  /** Receives one warning per failed unlock call (token count only, never token text). */
  readonly logger: Logger;
  /** Counters for `stats()`. */
  readonly stats: ClientStats;
  /**
   * Called synchronously with the tokens before anything else happens: the client removes them
   * from the refresher here, so a token whose unlock fails is never refreshed again and lapses.
   */
  readonly forget: (namespace: string, tokens: readonly string[]) => void;
}

/** A string that can be a token (the protocol's length bounds); anything else is refused or ignored. */
const isToken = (t: unknown): t is string => typeof t === "string" && t.length > 0 && t.length <= LIMITS.maxTokenLength;

/** One awaited `unlock` caller waiting in the pending set: its tokens and how to answer it. */
interface AwaitedUnlock {
  readonly namespace: string;
  readonly tokens: readonly string[];
  readonly resolve: (unlocked: string[]) => void;
  readonly reject: (err: unknown) => void;
}

/** What one flush learned, per namespace: the tokens released, and the failed calls' tokens. */
interface FlushOutcome {
  readonly released: Set<string>;
  failed: { readonly tokens: ReadonlySet<string>; readonly err: unknown }[] | null;
}

/**
 * AtlasDB's asynchronous batched unlocker (ADR 15), exactly as DESIGN.md states it.
 *
 * Enqueue: take the fair lock shared, add the tokens to the current pending set, release; then
 * compare-and-set `scheduled` from false to true and only on success schedule one flush.
 * Flush: clear `scheduled`; take the lock exclusive; swap the pending set for an empty one;
 * release; send the old set, one `unlock` call per namespace (split at the protocol's 10,000).
 * Flushes run on a serial executor, so at most one unlock call is in flight and tokens that
 * arrive meanwhile pile up for the next call: the batch size grows with load.
 *
 * Safety: only enqueued tokens are unlocked. Liveness: an enqueuer that loses the
 * compare-and-set saw a flush scheduled that has not cleared the flag yet, and that flush swaps
 * the set only after the enqueuer's insertion (it takes the lock exclusive after clearing).
 *
 * Awaited `unlock` calls take the same path ({@link unlock}): their tokens join the pending set
 * with a waiter that the flush answers from the call's `unlocked` list. So concurrent awaited
 * unlocks of a client coalesce into one call at a time, sharing the single flight with
 * `tryUnlock` (never two unlock calls in flight), where each used to be its own request.
 */
export class AsyncUnlocker {
  readonly #options: AsyncUnlockerOptions;
  readonly #lock = new SharedExclusiveLock();
  readonly #executor = new SerialExecutor();
  /** Enqueues begun and not yet finished; `flushed()` waits for them to reach the pending set. */
  #enqueuing = 0;
  #whenEnqueued: Array<() => void> = [];
  #pending = new Map<string, Set<string>>();
  /** Awaited unlocks whose tokens are in `#pending`, in arrival order; swapped with it. */
  #awaited: AwaitedUnlock[] = [];
  #scheduled = false;

  constructor(options: AsyncUnlockerOptions) {
    this.#options = options;
  }

  /**
   * Queue `tokens` for release and return at once. Never throws: malformed input is logged and
   * ignored, and failures of the unlock call itself are logged when they happen.
   */
  tryUnlock(namespace: string, tokens: readonly string[]): void {
    try {
      const valid = this.#wellFormed(tokens);
      this.#options.forget(namespace, valid);
      if (valid.length === 0) return;
      this.#options.stats.tokensEnqueued += valid.length;
      // A counter rather than a set of promises: `.catch` + `.finally` per call showed in profiles.
      this.#enqueuing++;
      this.#enqueue(namespace, valid).then(this.#enqueued, this.#enqueueFailed);
    } catch (err) {
      this.#options.logger.error({ err }, "leasehold: tryUnlock failed (a bug); the locks will lapse with their lease");
    }
  }

  /**
   * Release `tokens` and resolve with those that were held and are now released, as the
   * protocol's `unlock` answers them, through the same single flight as {@link tryUnlock}. The
   * tokens are forgotten (no longer refreshed) synchronously, first. Rejects with
   * `INVALID_ARGUMENT` when an entry is not a token string (before anything else: one bad token
   * must not fail the shared call), with the call's error when the call carrying its tokens
   * failed, and with `CANCELLED` when `signal` aborts: that only abandons the wait for the answer;
   * the tokens are released all the same. When a token is in several concurrent calls, the first
   * to ask gets it in its answer, as if they had run one after another.
   */
  unlock(namespace: string, tokens: readonly string[], signal?: AbortSignal): Promise<string[]> {
    if (!Array.isArray(tokens) || !tokens.every(isToken)) {
      return Promise.reject(
        new LeaseholdError("INVALID_ARGUMENT", `unlock: tokens must be an array of token strings of 1..${LIMITS.maxTokenLength} characters`, { path: "tokens" }),
      );
    }
    this.#options.forget(namespace, tokens);
    if (tokens.length === 0) return Promise.resolve([]);
    const answer = new Promise<string[]>((resolve, reject) => {
      this.#enqueuing++;
      this.#enqueue(namespace, tokens, { namespace, tokens, resolve, reject }).then(this.#enqueued, (err: unknown) => {
        this.#enqueueFailed(err);
        reject(err);
      });
    });
    if (signal === undefined) return answer;
    const aborted = "unlock: the wait for the answer was aborted; the tokens are released all the same";
    if (signal.aborted) {
      answer.catch(() => undefined); // nobody waits for it: a failed call is logged, not unhandled
      return Promise.reject(cancelledBy(signal, aborted));
    }
    return new Promise<string[]>((resolve, reject) => {
      const off = onAbort(signal, () => reject(cancelledBy(signal, aborted)));
      answer.then(resolve, reject).finally(off);
    });
  }

  /** Resolves once every token enqueued before the call has been sent (or its call failed). */
  async flushed(): Promise<void> {
    while (this.#enqueuing > 0 || this.#executor.pending > 0) {
      if (this.#enqueuing > 0) await new Promise<void>((resolve) => this.#whenEnqueued.push(resolve));
      await this.#executor.idle();
    }
  }

  readonly #enqueued = (): void => {
    if (--this.#enqueuing > 0 || this.#whenEnqueued.length === 0) return;
    const waiting = this.#whenEnqueued;
    this.#whenEnqueued = [];
    for (const resolve of waiting) resolve();
  };

  readonly #enqueueFailed = (err: unknown): void => {
    this.#options.logger.error({ err }, "leasehold: enqueueing tokens for unlock failed (a bug)");
    this.#enqueued();
  };

  #wellFormed(tokens: unknown): string[] {
    if (!Array.isArray(tokens)) {
      this.#options.logger.warn({ got: typeof tokens }, "leasehold: tryUnlock expects an array of tokens; ignored");
      return [];
    }
    const valid = tokens.filter(isToken);
    if (valid.length < tokens.length) {
      this.#options.logger.warn(
        { ignored: tokens.length - valid.length },
        "leasehold: tryUnlock ignored entries that are not token strings",
      );
    }
    return valid;
  }

  async #enqueue(namespace: string, tokens: readonly string[], awaited?: AwaitedUnlock): Promise<void> {
    const release = await this.#lock.acquireShared();
    try {
      let set = this.#pending.get(namespace);
      if (set === undefined) this.#pending.set(namespace, (set = new Set()));
      for (const token of tokens) set.add(token);
      // Under the same shared hold as its tokens: a flush swaps both together or neither.
      if (awaited !== undefined) this.#awaited.push(awaited);
    } finally {
      release();
    }
    // JavaScript runs this check-and-set without interleaving: it is the compare-and-set.
    if (!this.#scheduled) {
      this.#scheduled = true;
      this.#executor.submit(() => this.#flush());
    }
  }

  async #flush(): Promise<void> {
    this.#scheduled = false;
    const release = await this.#lock.acquireExclusive();
    const batch = this.#pending;
    const awaited = this.#awaited;
    this.#pending = new Map();
    this.#awaited = [];
    release();
    // Only awaited callers need the answers; a flush of tryUnlock tokens alone keeps none.
    const outcomes = awaited.length === 0 ? null : new Map<string, FlushOutcome>();
    for (const [namespace, set] of batch) {
      const outcome: FlushOutcome | undefined = outcomes === null ? undefined : { released: new Set(), failed: null };
      if (outcome !== undefined) outcomes!.set(namespace, outcome);
      // A failed call never stops the rest: each chunk's tokens are released or lapse on their own.
      for (const tokens of chunks([...set], LIMITS.maxTokensPerRequest)) await this.#send(namespace, tokens, outcome);
    }
    if (outcomes !== null) for (const waiter of awaited) answer(waiter, outcomes.get(waiter.namespace));
  }

  async #send(namespace: string, tokens: string[], outcome: FlushOutcome | undefined): Promise<void> {
    const { service, stats, logger } = this.#options;
    stats.recordUnlockCall(tokens.length);
    // Timed only while someone listens on leasehold:client:unlock:flush.
    const start = clientChannels.unlockFlush.hasSubscribers ? performance.now() : -1;
    try {
      const { unlocked } = await service.unlock(namespace, { tokens });
      if (outcome !== undefined) for (const token of unlocked) outcome.released.add(token);
      if (start >= 0) this.#flushed(namespace, tokens.length, start, undefined);
    } catch (err) {
      if (outcome !== undefined) (outcome.failed ??= []).push({ tokens: new Set(tokens), err });
      stats.unlockFailures++;
      // Token text never reaches logs (a token is a bearer credential), and neither does the
      // error message, which could quote a token; the code says what went wrong.
      const code = errorCode(err);
      if (start >= 0) this.#flushed(namespace, tokens.length, start, code);
      logger.warn(
        { namespace, tokenCount: tokens.length, code },
        "leasehold: unlock call failed; its locks will lapse with their lease",
      );
    }
  }

  #flushed(namespace: string, batchSize: number, start: number, code: string | undefined): void {
    const c = clientChannels.unlockFlush;
    if (c.hasSubscribers) c.publish(clientMessages.unlockFlush(namespace, batchSize, performance.now() - start, code));
  }
}

/**
 * Answer one awaited unlock from its flush: the call's error if a call carrying one of its tokens
 * failed, else its tokens that were released, each given to the first caller that asked for it.
 */
function answer(waiter: AwaitedUnlock, outcome: FlushOutcome | undefined): void {
  if (outcome === undefined) return waiter.resolve([]); // cannot happen: its tokens were in the batch
  if (outcome.failed !== null) {
    for (const { tokens, err } of outcome.failed) {
      if (waiter.tokens.some((t) => tokens.has(t))) return waiter.reject(err);
    }
  }
  const unlocked: string[] = [];
  for (const token of waiter.tokens) if (outcome.released.delete(token)) unlocked.push(token);
  waiter.resolve(unlocked);
}
