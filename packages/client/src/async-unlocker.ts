import { LIMITS, type LockService } from "@leasehold/protocol";
import type { Logger } from "./logger.js";
import { chunks } from "./chunks.js";
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
 */
export class AsyncUnlocker {
  readonly #options: AsyncUnlockerOptions;
  readonly #lock = new SharedExclusiveLock();
  readonly #executor = new SerialExecutor();
  /** Enqueues begun and not yet finished; `flushed()` waits for them to reach the pending set. */
  #enqueuing = 0;
  #whenEnqueued: Array<() => void> = [];
  #pending = new Map<string, Set<string>>();
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
    const valid = tokens.filter(
      (t): t is string => typeof t === "string" && t.length > 0 && t.length <= LIMITS.maxTokenLength,
    );
    if (valid.length < tokens.length) {
      this.#options.logger.warn(
        { ignored: tokens.length - valid.length },
        "leasehold: tryUnlock ignored entries that are not token strings",
      );
    }
    return valid;
  }

  async #enqueue(namespace: string, tokens: readonly string[]): Promise<void> {
    const release = await this.#lock.acquireShared();
    try {
      let set = this.#pending.get(namespace);
      if (set === undefined) this.#pending.set(namespace, (set = new Set()));
      for (const token of tokens) set.add(token);
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
    this.#pending = new Map();
    release();
    for (const [namespace, set] of batch) {
      for (const tokens of chunks([...set], LIMITS.maxTokensPerRequest)) await this.#send(namespace, tokens);
    }
  }

  async #send(namespace: string, tokens: string[]): Promise<void> {
    const { service, stats, logger } = this.#options;
    stats.recordUnlockCall(tokens.length);
    try {
      await service.unlock(namespace, { tokens });
    } catch (err) {
      stats.unlockFailures++;
      // Token text never reaches logs (a token is a bearer credential), and neither does the
      // error message, which could quote a token; the code says what went wrong.
      const code = typeof err === "object" && err !== null && "code" in err ? String(err.code) : "UNKNOWN";
      logger.warn(
        { namespace, tokenCount: tokens.length, code },
        "leasehold: unlock call failed; its locks will lapse with their lease",
      );
    }
  }
}
