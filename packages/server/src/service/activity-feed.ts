import { MAX_HOLDERS_PER_REVOKE_EVENT, type ActivityEvent, type ActivitySecond, type RevokeResponse } from "@leasehold/protocol";
import type { LeaseLapse } from "../engine/lease-lapse.js";
import { summarizeHolder } from "./holder-summary.js";

/** Most events kept: a page polling every second never misses one unless 1,000 arrive in a second. */
const MAX_EVENTS = 1_000;
/** Seconds of grant and wait history kept for the status page's charts. */
const HISTORY_SECONDS = 120;
/** Most waits kept per second for its percentiles: bounded memory however busy the second. */
const MAX_WAITS_PER_SECOND = 2_048;
/** The answer of `GET /v1/events`. */
export interface ActivityPage {
  readonly events: readonly ActivityEvent[];
  /** Send it as `after` next time to get only newer events. */
  readonly nextSeq: number;
  /** The last completed seconds, oldest first; absent for a caller who may not see every namespace. */
  readonly seconds?: readonly ActivitySecond[] | undefined;
}

/** What the feed needs from its host. */
export interface ActivityFeedOptions {
  /** Descriptor grants since start (the engine's counter), sampled once a second. */
  readonly grantsTotal: () => number;
  /** Wall clock in ms for event times and second boundaries. Default `Date.now`. */
  readonly now?: (() => number) | undefined;
}

interface Bucket {
  at: number;
  grants: number;
  waits: number[];
  waitCount: number;
}

/**
 * Recent lapses and revocations and a per-second history of grants and waits, for the status page
 * (`GET /ui`) and anyone polling `GET /v1/events`. Bounded: a ring of {@link MAX_EVENTS} events and
 * {@link HISTORY_SECONDS} seconds. The hot path pays nothing: grants are sampled from the engine's
 * counter when a second is closed, and only requests that waited in a queue are recorded.
 */
export class ActivityFeed {
  readonly #events: ActivityEvent[] = [];
  readonly #seconds: ActivitySecond[] = [];
  readonly #grantsTotal: () => number;
  readonly #now: () => number;
  #seq = 0;
  #timer: NodeJS.Timeout | undefined;
  #closed = false;
  #current: Bucket;
  #grantsAtStart: number;

  constructor(options: ActivityFeedOptions) {
    this.#grantsTotal = options.grantsTotal;
    this.#now = options.now ?? Date.now;
    this.#grantsAtStart = this.#grantsTotal();
    this.#current = { at: Math.floor(this.#now() / 1_000), grants: 0, waits: [], waitCount: 0 };
  }

  /** A token's lease lapsed. */
  lapse(namespace: string, descriptors: number, lapse: LeaseLapse): void {
    this.#push({
      seq: ++this.#seq,
      at: this.#now(),
      kind: "lapse",
      namespace,
      fingerprint: lapse.fingerprint,
      clientDescription: lapse.clientDescription,
      descriptors,
      firstDescriptor: lapse.firstDescriptor,
      startTimestamp: lapse.startTimestamp,
      heldForMs: lapse.heldForMs,
    });
  }

  /** An admin revoked holders (only a revoke that released something is an event). */
  revoked(namespace: string, reason: string | undefined, answer: RevokeResponse): void {
    if (answer.revoked.length === 0) return;
    this.#push({
      seq: ++this.#seq,
      at: this.#now(),
      kind: "revoke",
      namespace,
      reason,
      released: answer.revoked.length,
      holders: answer.revoked.slice(0, MAX_HOLDERS_PER_REVOKE_EVENT).map(summarizeHolder),
    });
  }

  /** A request that had waited in a queue was granted after `waitMs`. */
  waited(waitMs: number): void {
    this.#roll();
    const bucket = this.#current;
    bucket.waitCount++;
    // Reservoir sampling keeps a fair sample of a busy second in bounded memory.
    if (bucket.waits.length < MAX_WAITS_PER_SECOND) bucket.waits.push(waitMs);
    else {
      const slot = Math.floor(Math.random() * bucket.waitCount);
      if (slot < MAX_WAITS_PER_SECOND) bucket.waits[slot] = waitMs;
    }
  }

  /**
   * Events after `after` that `visible` lets through (every event without it), and the history of
   * seconds when `withSeconds`.
   */
  page(after: number, visible: ((namespace: string) => boolean) | undefined, withSeconds: boolean): ActivityPage {
    // From the first reader on, seconds are closed on time (grants are sampled at each close);
    // a server nobody watches runs no timer at all. Unref'd: it never holds the process open.
    if (this.#timer === undefined && !this.#closed) {
      this.#timer = setInterval(() => this.#roll(), 250);
      this.#timer.unref();
    }
    this.#roll();
    const events = this.#events.filter((e) => e.seq > after && (visible === undefined || visible(e.namespace)));
    return withSeconds ? { events, nextSeq: this.#seq, seconds: [...this.#seconds] } : { events, nextSeq: this.#seq };
  }

  /** Stop the sampling timer (the server is stopping). Idempotent. */
  close(): void {
    this.#closed = true;
    clearInterval(this.#timer);
  }

  #push(event: ActivityEvent): void {
    this.#events.push(event);
    if (this.#events.length > MAX_EVENTS) this.#events.splice(0, this.#events.length - MAX_EVENTS);
  }

  /** Close every second that has ended, so the history is current whoever asks. */
  #roll(): void {
    const second = Math.floor(this.#now() / 1_000);
    if (second <= this.#current.at) return;
    const total = this.#grantsTotal();
    // Grants are sampled when a second is closed: those since the last close belong to it.
    this.#current.grants = total - this.#grantsAtStart;
    this.#grantsAtStart = total;
    this.#close(this.#current);
    // Idle seconds in between had no grants and no waits, and are recorded as such.
    for (let s = Math.max(this.#current.at + 1, second - HISTORY_SECONDS); s < second; s++) this.#close({ at: s, grants: 0, waits: [], waitCount: 0 });
    this.#current = { at: second, grants: 0, waits: [], waitCount: 0 };
  }

  #close(bucket: Bucket): void {
    let waits: ActivitySecond["waits"];
    if (bucket.waitCount > 0) {
      const sorted = [...bucket.waits].sort((a, b) => a - b);
      const at = (q: number): number => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
      waits = { count: bucket.waitCount, p50Ms: at(0.5), p99Ms: at(0.99), maxMs: sorted[sorted.length - 1] ?? 0 };
    }
    this.#seconds.push(waits === undefined ? { at: bucket.at, grants: bucket.grants } : { at: bucket.at, grants: bucket.grants, waits });
    if (this.#seconds.length > HISTORY_SECONDS) this.#seconds.splice(0, this.#seconds.length - HISTORY_SECONDS);
  }
}
