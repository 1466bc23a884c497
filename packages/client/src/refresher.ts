import type { Lease, RefreshResponse } from "@leasehold/protocol";
import type { Logger } from "./logger.js";
import { Subject, exhaustMap, filter, from, interval, type Observable, type Subscription, tap } from "rxjs";
import type { ClientStats } from "./client-stats.js";
import type { LostLock, LostLockReason } from "./lost-lock.js";

/** What the {@link Refresher} needs; `LockClient` supplies it. */
export interface RefresherOptions {
  /**
   * The batched refresh of the client (shared with `refresh()`). `stillWanted` must be applied
   * when the call is actually sent: the ask may wait behind another refresh call meanwhile.
   */
  readonly refresh: (tokens: readonly string[], stillWanted: (token: string) => boolean) => Promise<RefreshResponse>;
  /** Receives failed refreshes and lost locks, as counts (tokens never reach logs). */
  readonly logger: Logger;
  /** Counts lost locks for `stats()`. */
  readonly stats: ClientStats;
  /** Monotonic milliseconds. */
  readonly now: () => number;
  /** Longest a token is refreshed before it is dropped as leaked. */
  readonly maxTenureMs: number;
  /** Longest gap between refreshes of a token; the lease may make it shorter (half of `validForMs`). */
  readonly refreshIntervalMs: number | undefined;
  /** How often the refresher wakes to check what is due. */
  readonly tickMs: number;
}

interface Held {
  readonly leaderId: string;
  readonly acquiredAt: number;
  /** Lease end, measured from before the request that granted or renewed it was sent. */
  expiresAt: number;
  /** When to renew: half the lease (or the configured interval) after the last renewal was sent. */
  renewAt: number;
}

/**
 * Keeps held tokens alive: wakes every `tickMs` (only while something is held, so an idle client
 * never keeps the process alive), drops what lapsed or outstayed its tenure, and when any token is
 * due sends one batched refresh for all of them (`exhaustMap`: never two at once). Tokens the
 * answer leaves out, or whose answer comes from another leader, are dropped and reported.
 */
export class Refresher {
  readonly #options: RefresherOptions;
  readonly #held = new Map<string, Held>();
  readonly #lost = new Subject<LostLock>();
  #ticking: Subscription | undefined;
  #closed = false;

  constructor(options: RefresherOptions) {
    this.#options = options;
  }

  /** Every token given up, with the reason. */
  get lost(): Observable<LostLock> {
    return this.#lost.asObservable();
  }

  /** Start refreshing `token`, granted with `lease` by a request sent at `sentAt`. */
  track(token: string, lease: Lease, sentAt: number): void {
    if (this.#closed) return;
    this.#held.set(token, {
      leaderId: lease.leaderId,
      acquiredAt: sentAt,
      expiresAt: sentAt + lease.validForMs,
      renewAt: sentAt + this.#renewAfter(lease.validForMs),
    });
    this.#startTicking();
  }

  /** Stop refreshing `tokens`, synchronously; they are not reported as lost. */
  forget(tokens: readonly string[]): void {
    // The ticker is not stopped here even when nothing is left: a client that locks and unlocks
    // one token at a time would otherwise build and tear down an rxjs interval per lock (it showed
    // in the profile). The next tick stops it if nothing was tracked again meanwhile.
    for (const token of tokens) this.#held.delete(token);
  }

  /** The lease end of a held token (monotonic ms), or undefined once it is no longer held. */
  expiresAt(token: string): number | undefined {
    return this.#held.get(token)?.expiresAt;
  }

  /**
   * Refresh every token granted or renewed under `leaderId` at the next tick, whenever it was due:
   * the transport saw that term end (a newer view of the shard names another leader). The refresh
   * answer decides, as always (PROTOCOL.md "Leader ids": a token is lost only when a refresh
   * says so or its lease runs out): the shard's new leader answers with its own `leaderId` and
   * the tokens are reported `leader-changed` then; a view that was wrong costs one refresh.
   */
  refreshLeaderSoon(leaderId: string): void {
    const now = this.#options.now();
    for (const held of this.#held.values()) if (held.leaderId === leaderId) held.renewAt = Math.min(held.renewAt, now);
  }

  /** Stop for good: every held token is reported `client-closed` and `lost` completes. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#stopTicking();
    this.#dropAll([...this.#held.keys()], "client-closed");
    this.#lost.complete();
  }

  readonly #stillHeld = (token: string): boolean => this.#held.has(token);

  #renewAfter(validForMs: number): number {
    return Math.min(this.#options.refreshIntervalMs ?? Infinity, validForMs / 2);
  }

  #startTicking(): void {
    if (this.#ticking !== undefined) return;
    this.#ticking = interval(this.#options.tickMs)
      .pipe(
        filter(() => {
          if (this.#held.size > 0) return true;
          this.#stopTicking();
          return false;
        }),
        tap(() => this.#sweep()),
        filter(() => this.#due()),
        exhaustMap(() => from(this.#refreshAll())),
      )
      .subscribe();
  }

  #stopTicking(): void {
    this.#ticking?.unsubscribe();
    this.#ticking = undefined;
  }

  #sweep(): void {
    const now = this.#options.now();
    const leaked: string[] = [];
    const lapsed: string[] = [];
    for (const [token, held] of this.#held) {
      if (now - held.acquiredAt >= this.#options.maxTenureMs) leaked.push(token);
      else if (now >= held.expiresAt) lapsed.push(token);
    }
    if (leaked.length > 0) {
      this.#options.logger.warn(
        { count: leaked.length, maxTenureMs: this.#options.maxTenureMs },
        "leasehold: locks held longer than maxTenureMs are no longer refreshed (leaked?)",
      );
      this.#dropAll(leaked, "max-tenure");
    }
    this.#dropAll(lapsed, "lease-expired");
  }

  #due(): boolean {
    const now = this.#options.now();
    for (const held of this.#held.values()) if (now >= held.renewAt) return true;
    return false;
  }

  async #refreshAll(): Promise<void> {
    const tokens = [...this.#held.keys()];
    if (tokens.length === 0) return;
    const sentAt = this.#options.now();
    let answer: RefreshResponse;
    try {
      // Filtered again when the call leaves: a token forgotten (unlocked) while this ask waited
      // behind another refresh call must not be renewed ("never refreshed again").
      answer = await this.#options.refresh(tokens, this.#stillHeld);
    } catch (err) {
      const code = typeof err === "object" && err !== null && "code" in err ? String(err.code) : "UNKNOWN";
      this.#options.logger.warn({ tokenCount: tokens.length, code }, "leasehold: refresh failed; will retry");
      // Back off a little: the transport already retried, and every tick would hammer a sick server.
      const retryAt = this.#options.now() + 2 * this.#options.tickMs;
      for (const token of tokens) {
        const held = this.#held.get(token);
        if (held !== undefined) held.renewAt = Math.max(held.renewAt, retryAt);
      }
      return;
    }
    const refreshed = new Set(answer.refreshed);
    const renewAt = sentAt + this.#renewAfter(answer.lease.validForMs);
    const otherLeader: string[] = [];
    const gone: string[] = [];
    for (const token of tokens) {
      const held = this.#held.get(token);
      if (held === undefined) continue; // unlocked while the refresh was in flight
      if (held.leaderId !== answer.lease.leaderId) otherLeader.push(token);
      else if (!refreshed.has(token)) gone.push(token);
      else {
        held.expiresAt = Math.max(held.expiresAt, sentAt + answer.lease.validForMs);
        held.renewAt = renewAt;
      }
    }
    this.#dropAll(otherLeader, "leader-changed");
    this.#dropAll(gone, "not-refreshed");
  }

  /** Drop and report `tokens`, with one warning for all of them (counts only: tokens are credentials). */
  #dropAll(tokens: readonly string[], reason: LostLockReason): void {
    if (tokens.length === 0) return;
    if (reason !== "max-tenure" && reason !== "client-closed") {
      this.#options.logger.warn({ count: tokens.length, reason }, "leasehold: lost locks");
    }
    for (const token of tokens) this.#drop(token, reason);
  }

  #drop(token: string, reason: LostLockReason): void {
    if (!this.#held.delete(token)) return;
    this.#options.stats.lostLocks++;
    this.#lost.next({ token, reason });
    if (this.#held.size === 0) this.#stopTicking();
  }
}
