import type { LeaseholdError } from "@leasehold/protocol";
import type { WaitingLockHandle } from "../service/waiting-lock-handle.js";
import { coordinatorUnavailable } from "./cluster-errors.js";
import type { HeldBackPlace, HeldBackPlaces } from "./held-back-places.js";
import { realProcessClock, type ProcessClock } from "./process-clock.js";
import { QueuedLock, type HeldBack } from "./queued-lock.js";
import type { ShardReserver } from "./shard-reserver.js";

/** What {@link HeldBackLines} needs of its term. */
export interface HeldBackLinesHost {
  /** Monotonic milliseconds (a held-back request's deadline counts from its arrival). */
  readonly clock: () => number;
  /** Sets a held-back request's deadline timer. Default: Node's `setTimeout`, unref'd. */
  readonly setTimer?: ProcessClock["setTimer"] | undefined;
  /** True while the term's lease-wait holds grants back (each request notes it on arrival). */
  readonly waiting: () => boolean;
  /** Loads a namespace's timestamp bound; a line starts only once it is loaded. */
  readonly reserver: Pick<ShardReserver, "isPrepared" | "prepare">;
  /** True when `namespace`'s line may start now: the term lives, its lease-wait is over, the bound is loaded. */
  readonly mayStart: (namespace: string) => boolean;
  /** The `retryAfterMs` of the 503 a line is failed with when its bound cannot be loaded. */
  readonly retryAfterMs: number;
  /** TEST ONLY (`ShardTermOptions.detachAtWaitEnd`): a request takes its line before it asks whether the wait is over. Default off. */
  readonly detachAtWaitEnd?: boolean | undefined;
}

/**
 * A request's place carried from an earlier leader's line (a hand-over inside its lease-wait): the
 * line stops at it until its re-sent `requestId` claims it (the re-send takes its place), or until
 * `until` (the claim window, or the request's own deadline, whichever is first); then it is dropped.
 */
class CarriedPlace {
  constructor(
    readonly requestId: string,
    /** Monotonic deadline of the request itself. */
    readonly deadline: number,
    /** Monotonic end of its claim window. */
    public claimUntil: number,
  ) {}

  get until(): number {
    return Math.min(this.deadline, this.claimUntil);
  }
}

/** One entry of a line: a held-back request, or a carried place not claimed yet. */
type LineEntry = HeldBack | CarriedPlace;

/**
 * A new term's held-back requests (locks and `wait-for-locks`), one first-in-first-out line per
 * namespace (PROTOCOL.md "Leases across failover"): a request that arrives while the term may not
 * grant yet, or while its namespace's line is not empty, queues at the end of the line; a line
 * starts, in order, once its namespace may start ({@link HeldBackLinesHost.mayStart}); each request
 * is answered `timeout` at its own deadline if still held back then (queued-lock.ts).
 */
export class HeldBackLines {
  /** Held-back requests per namespace, in arrival order (their answer types differ), and carried places. */
  private readonly lines = new Map<string, LineEntry[]>();
  /** Per namespace, the timer that drains its line again once the carried place it stops at is due. */
  private readonly wakes = new Map<string, () => void>();

  constructor(private readonly host: HeldBackLinesHost) {}

  /** True while `namespace` has a line: a request of it must queue behind it. */
  has(namespace: string): boolean {
    return this.lines.has(namespace);
  }

  /**
   * Queue a request at the end of `namespace`'s line (loading the namespace's bound if needed);
   * `begin` runs it once the line starts. Answers what the caller holds meanwhile.
   */
  hold<A extends { readonly status: string }>(
    namespace: string,
    request: { readonly requestId?: string | undefined; readonly acquireTimeoutMs?: number | undefined },
    begin: (request: unknown) => A | WaitingLockHandle<A>,
    cancelledAs?: A,
  ): WaitingLockHandle<A> {
    const now = this.host.clock();
    // Asked first: a wait found over here starts every line (drainAll), which must happen before
    // this request looks for its own, or it joins a line already started and gone.
    const detach = this.host.detachAtWaitEnd === true;
    const waiting = detach ? null : this.host.waiting();
    let queue = this.lines.get(namespace);
    if (queue === undefined) this.lines.set(namespace, (queue = []));
    const line = queue;
    const carried = line.some((e) => e instanceof CarriedPlace);
    const queued = new QueuedLock<A>(
      request,
      now + (request.acquireTimeoutMs ?? 0),
      now,
      (gone) => {
        const i = line.indexOf(gone);
        if (i >= 0) line.splice(i, 1);
      },
      // Answered timeout at its deadline while held back: during the lease-wait, or behind a carried place.
      (waiting ?? this.host.waiting()) || carried,
      begin,
      cancelledAs,
      this.host.setTimer,
    );
    // A re-send of a carried request takes its place while it is kept; any other request goes to the end.
    const place = line.findIndex((e) => e instanceof CarriedPlace && e.requestId === request.requestId && e.until > now);
    if (place >= 0) line[place] = queued;
    else line.push(queued);
    this.prepare(namespace);
    // Behind a carried place, or in a line that may start now (its wait over and bound loaded): start it.
    if (carried || (!detach && this.host.mayStart(namespace))) this.drain(namespace);
    return queued.handle;
  }

  /**
   * Seed the lines with the places an earlier leader's hand-over carried, ahead of anything held
   * here (a term calls it as it starts), each kept for `claimWindowMs` for its re-sent `requestId`.
   */
  carry(places: HeldBackPlaces, claimWindowMs: number): void {
    const now = this.host.clock();
    for (const [namespace, carried] of Object.entries(places)) {
      if (carried.length === 0) continue;
      const line = this.lines.get(namespace) ?? [];
      this.lines.set(namespace, [...carried.map((p: HeldBackPlace) => new CarriedPlace(p.requestId, now + p.remainingMs, now + claimWindowMs)), ...line]);
      this.prepare(namespace);
      this.drain(namespace);
    }
  }

  /** Count every carried place's claim window from now (the term's gate opens only now: re-sends were refused until here). */
  restartClaimWindow(claimWindowMs: number): void {
    const until = this.host.clock() + claimWindowMs;
    for (const line of this.lines.values()) for (const e of line) if (e instanceof CarriedPlace) e.claimUntil = until;
  }

  /**
   * The places of every request still held back, in line order, with the time left to each
   * deadline (a hand-over carries them): requests without a `requestId` cannot be claimed, so
   * they are left out; carried places not claimed yet are carried on.
   */
  places(): HeldBackPlaces {
    const now = this.host.clock();
    const out: Record<string, HeldBackPlace[]> = {};
    for (const [namespace, line] of this.lines) {
      const places: HeldBackPlace[] = [];
      for (const e of line) {
        const requestId = e instanceof CarriedPlace ? e.requestId : e.request.requestId;
        const deadline = e instanceof CarriedPlace ? e.until : e.deadline;
        if (requestId !== undefined && deadline > now) places.push({ requestId, remainingMs: Math.floor(deadline - now) });
      }
      if (places.length > 0) out[namespace] = places;
    }
    return out;
  }

  private prepare(namespace: string): void {
    if (this.host.reserver.isPrepared(namespace)) return;
    this.host.reserver.prepare(namespace).then(
      () => this.drain(namespace),
      (err: unknown) => this.fail(namespace, coordinatorUnavailable(err, this.host.retryAfterMs)),
    );
  }

  /** Cancel held-back requests of `namespace` with this `requestId`; true when there were some. */
  cancel(namespace: string, requestId: string): boolean {
    const queue = this.lines.get(namespace);
    if (queue === undefined) return false;
    let found = false;
    for (const queued of [...queue]) {
      if (queued instanceof CarriedPlace) {
        if (queued.requestId !== requestId) continue;
        found = true;
        queue.splice(queue.indexOf(queued), 1);
        continue;
      }
      if (queued.request.requestId !== requestId) continue;
      found = true;
      queued.cancel();
    }
    if (found) this.drain(namespace);
    return found;
  }

  /**
   * Start `namespace`'s line, in order, if it may start now: up to a carried place not claimed
   * yet and not due (the rest waits behind it; it is drained again when the place is due).
   */
  drain(namespace: string): void {
    if (!this.host.mayStart(namespace)) return;
    const queue = this.lines.get(namespace);
    if (queue === undefined) return;
    this.wakes.get(namespace)?.();
    this.wakes.delete(namespace);
    const now = this.host.clock();
    while (queue.length > 0) {
      const next = queue[0]!;
      if (next instanceof CarriedPlace && next.until > now) {
        const setTimer = this.host.setTimer ?? realProcessClock.setTimer;
        this.wakes.set(namespace, setTimer(() => this.drain(namespace), Math.ceil(next.until - now)));
        return;
      }
      queue.shift();
      if (!(next instanceof CarriedPlace)) next.start(now);
    }
    this.lines.delete(namespace);
  }

  /** Start every line that may start now (the lease-wait is over). */
  drainAll(): void {
    for (const namespace of [...this.lines.keys()]) this.drain(namespace);
  }

  /** Answer every request of `namespace`'s line with `error`. */
  fail(namespace: string, error: LeaseholdError): void {
    const queue = this.lines.get(namespace);
    if (queue === undefined) return;
    this.lines.delete(namespace);
    this.wakes.get(namespace)?.();
    this.wakes.delete(namespace);
    for (const queued of queue) if (!(queued instanceof CarriedPlace)) queued.fail(error);
  }

  /** Answer every held-back request with `error` (the term ended). */
  failAll(error: LeaseholdError): void {
    for (const namespace of [...this.lines.keys()]) this.fail(namespace, error);
  }
}
