import type {
  ImmutableTimestampResponse,
  LockMode,
  LockResponse,
  LockWatchesResponse,
  LockWatchUpdate,
  RefreshResponse,
  StartTransactionsResponse,
  TimestampsResponse,
  WaitForLocksResponse,
} from "@leasehold/protocol";
import type { SimCall } from "./sim-caller.js";
import type { SimHistory } from "./sim-history.js";
import { SimLeaseHolder } from "./sim-lease-holder.js";
import type { SimRandom } from "./sim-random.js";
import type { Scheduler } from "./scheduler.js";

/** What a simulated client reaches a server's service through (sim-world.ts). */
export interface SimServers {
  /** Every server's URL, in a fixed order. */
  urls(): readonly string[];
  /**
   * Send `call` to the server at `url` from `client`: it crosses the network, runs on that server
   * as one of its events, and its answer (or error) crosses back. Rejects with a connection error
   * when the server is down, or goes down before answering.
   */
  call<T>(client: string, url: string, label: string, call: SimCall<T>): Promise<T>;
}

/** The part of a cluster member's lock service the clients use. */
export interface SimService {
  /** Random per server process (the simulator's observer tells processes apart by it). */
  readonly leaderId: string;
  /**
   * Each shard's lock table (`leaderId`) as a request reaching this server now would meet it, in
   * shard order: its own term's, gate open or closed, else the leader it knows elsewhere (the
   * observer notes which table each request queued in; sim-service-view.ts).
   */
  shardLeaders(): readonly { readonly leaderId: string | null }[];
  beginLock(namespace: string, request: unknown): LockResponse | { readonly answer: Promise<LockResponse> };
  beginWaitForLocks(namespace: string, request: unknown): WaitForLocksResponse | { readonly answer: Promise<WaitForLocksResponse> };
  refresh(namespace: string, request: unknown): Promise<RefreshResponse>;
  unlock(namespace: string, request: unknown): Promise<unknown>;
  timestamps(namespace: string, request: unknown): Promise<TimestampsResponse>;
  startTransactions(namespace: string, request: unknown): Promise<StartTransactionsResponse>;
  immutableTimestamp(namespace: string, request: unknown): Promise<ImmutableTimestampResponse>;
  lockWatches(namespace: string, request: unknown): Promise<LockWatchesResponse>;
  lockEvents(namespace: string, request: unknown): Promise<LockWatchUpdate>;
}

/** What a client does, and how long it runs. */
export interface SimClientPlan {
  readonly namespaces: readonly string[];
  readonly descriptors: readonly string[];
  /** The client stops starting new work at this true time. */
  readonly until: number;
  /** Chance that a lock request is sent twice with one `requestId` (a hedged duplicate on another connection). Default 0.2. */
  readonly hedge?: number | undefined;
  /**
   * Re-send a waiting request with its whole wait again, as a generic HTTP retry re-sends the same
   * body (`pnpm sim --full-wait-resends`). Default false: what is left of it, as leasehold's
   * client does.
   */
  readonly fullWaitResends?: boolean | undefined;
}

/** The descriptor every client takes in `permit` mode (and no other), and its limit. */
export const PERMIT = { descriptor: "permits", limit: 2 } as const;

/** The waits a request may ask for (`acquireTimeoutMs`). */
const WAITS = [0, 200, 1_000, 3_000];

/**
 * One simulated client. Each turn it does one thing: lock (exclusive or shared, with a
 * `requestId`, waiting a while; sometimes a hedged duplicate), take a permit, wait for locks
 * (`wait-for-locks`), start a transaction (reading the immutable timestamp while it runs, ending
 * it by unlocking its immutable-timestamp lock), or ask for timestamps. It follows `421
 * NOT_LEADER` and re-sends after `503` or a broken connection with the same request until its own
 * deadline (a waiting request asking for what is left of its wait, as the real client does); it holds what it got refreshing it (on time or late), unlocks without waiting, or
 * crashes and leaves it to lapse. Everything it was told goes in the {@link SimHistory}.
 */
export class SimClient extends SimLeaseHolder {
  private serial = 0;
  /** Draws for the operations added after the first five clients' streams were fixed (fork `ops`). */
  private readonly ops: SimRandom;

  constructor(name: string, scheduler: Scheduler, servers: SimServers, random: SimRandom, history: SimHistory, private readonly plan: SimClientPlan) {
    super(name, scheduler, servers, random, history);
    this.ops = random.fork("ops");
  }

  /** Begin the client's loop. */
  start(): void {
    this.next();
  }

  private next(): void {
    if (this.scheduler.now >= this.plan.until) return;
    const pause = this.random.int(5, 120);
    this.scheduler.after(pause, this.name, "next", () => {
      const roll = this.ops.float();
      const work = roll < 0.12 ? this.transaction() : roll < 0.22 ? this.waitForLocks() : roll < 0.3 ? this.permit() : this.random.chance(0.25) ? this.stamp() : this.lockAndHold();
      void work.then(
        () => this.next(),
        () => this.next(),
      );
    });
  }

  private lockAndHold(): Promise<void> {
    const namespace = this.random.pick(this.plan.namespaces);
    const descriptor = this.random.pick(this.plan.descriptors);
    const mode = this.random.chance(0.8) ? "exclusive" : "shared";
    return this.lockOne(this.random, namespace, descriptor, mode);
  }

  private permit(): Promise<void> {
    return this.lockOne(this.ops, this.ops.pick(this.plan.namespaces), PERMIT.descriptor, "permit", PERMIT.limit);
  }

  /** Lock `descriptor` in `mode` (drawing its wait and hold from `draw`), hold it, let it go. */
  private async lockOne(draw: SimRandom, namespace: string, descriptor: string, mode: LockMode, limit?: number): Promise<void> {
    const requestId = `${this.name}-${++this.serial}`;
    const acquireTimeoutMs = draw.pick(WAITS);
    const locks = [limit === undefined ? { descriptor, mode } : { descriptor, mode, limit }];
    const sentAt = this.scheduler.now;
    // Each send asks to wait what is left of acquireTimeoutMs (routedWait), under the same requestId.
    const begin = (service: SimService, waitMs: number) => service.beginLock(namespace, { locks, acquireTimeoutMs: waitMs, requestId });
    const observed = mode === "permit" ? begin : this.history.queue.observe(() => this.scheduler.now, { client: this.name, requestId, namespace, descriptor, mode, acquireTimeoutMs }, begin);
    const lock = (waitMs: number) => (service: SimService) => observed(service, waitMs);
    const wait = this.waitOf(sentAt, acquireTimeoutMs);
    this.history.asking({ namespace, descriptor, mode, sentAt });
    const waiter = this.history.waiting({ client: this.name, namespace, what: `lock of ${descriptor} (${mode}, ${requestId})`, sentAt, acquireTimeoutMs });
    const holdFor = draw.int(50, 6_000);
    // Each grant is recorded the moment it arrives (a hedged duplicate may still be in flight): the
    // first is held and refreshed at once; a later one with another token (the same requestId
    // granted twice) is recorded too, then let go.
    let held: Promise<void> | null = null;
    let token: string | null = null;
    const onAnswer = (answer: LockResponse | null): void => {
      this.history.answered(waiter, answer?.status ?? null, this.scheduler.now);
      if (answer === null || answer.status !== "acquired") return;
      const granted = answer.acquired[0]!;
      if (token === answer.token) return;
      const hold = this.history.granted(
        { client: this.name, namespace, descriptor, mode, limit, token: answer.token, fencingToken: granted.fencingToken, leaderId: answer.lease.leaderId, sentAt, receivedAt: this.scheduler.now },
        answer.lease.validForMs,
      );
      if (token === null) {
        token = answer.token;
        held = this.keep(hold, answer.lease.validForMs, this.scheduler.now + holdFor);
      } else this.letGo(hold);
    };
    const sends = [this.routedWait(namespace, "lock", wait, lock).then(onAnswer)];
    if (draw.chance(this.plan.hedge ?? 0.2)) {
      sends.push(this.wait(draw.int(20, 80)).then(() => this.routedWait(namespace, "lock (hedged)", wait, lock).then(onAnswer)));
    }
    await Promise.allSettled(sends);
    if (held !== null) await held;
  }

  /** A waiting request's wait for {@link routedWait}: re-sent with what is left of it, or whole ({@link SimClientPlan.fullWaitResends}). */
  private waitOf(sentAt: number, waitMs: number): { readonly sentAt: number; readonly waitMs: number; readonly full: boolean } {
    return { sentAt, waitMs, full: this.plan.fullWaitResends === true };
  }

  /** `wait-for-locks` on one descriptor, re-sent with its `requestId` until answered or its deadline. */
  private async waitForLocks(): Promise<void> {
    const namespace = this.ops.pick(this.plan.namespaces);
    const descriptor = this.ops.pick(this.plan.descriptors);
    const mode = this.ops.chance(0.7) ? "exclusive" : "shared";
    const acquireTimeoutMs = this.ops.pick([0, 500, 2_000, 5_000]);
    const requestId = `${this.name}-${++this.serial}`;
    const locks = [{ descriptor, mode }];
    const sentAt = this.scheduler.now;
    const waiter = this.history.waiting({ client: this.name, namespace, what: `wait-for-locks on ${descriptor} (${mode}, ${requestId})`, sentAt, acquireTimeoutMs });
    const ask = (waitMs: number) => (s: SimService) => s.beginWaitForLocks(namespace, { locks, acquireTimeoutMs: waitMs, requestId });
    const answer = await this.routedWait(namespace, "wait-for-locks", this.waitOf(sentAt, acquireTimeoutMs), ask).catch(() => null);
    this.history.answered(waiter, answer?.status ?? null, this.scheduler.now);
    if (answer?.status === "free") this.history.free({ client: this.name, namespace, descriptor, mode, sentAt, receivedAt: this.scheduler.now });
  }

  /**
   * Start one or two transactions (sometimes asking for the namespace's lock-watch state with
   * them), hold them for a while reading the immutable timestamp, then end them by unlocking their
   * immutable-timestamp locks (or crash and leave them to lapse).
   */
  private async transaction(): Promise<void> {
    const namespace = this.ops.pick(this.plan.namespaces);
    const count = this.ops.int(1, 2);
    const withWatch = this.ops.chance(0.5);
    const holdFor = this.ops.int(100, 5_000);
    const sentAt = this.scheduler.now;
    const request = withWatch ? { count, lockWatch: { since: null } } : { count };
    const answer = await this.routed(namespace, "transactions/start", sentAt + 2_000, (s) => s.startTransactions(namespace, request)).catch(() => null);
    if (answer === null) return;
    const at = this.scheduler.now;
    const starts = answer.transactions.map((t) => t.startTimestamp);
    this.history.immutable({ client: this.name, namespace, value: answer.immutableTimestamp, sentAt, receivedAt: at, starts });
    this.history.leaderSeen(namespace, answer.lease.leaderId, sentAt, at, `${this.name}'s transactions/start`);
    if (answer.lockWatch !== undefined) this.history.watched(this.name, namespace, null, answer.lockWatch, sentAt, at, answer.lease.leaderId);
    const txns = answer.transactions.map((t) => this.history.started({ client: this.name, namespace, start: t.startTimestamp, token: t.token, leaderId: answer.lease.leaderId, sentAt, receivedAt: at }, answer.lease.validForMs));
    const readImmutable = async (): Promise<void> => {
      if (!this.ops.chance(0.5)) return;
      const asked = this.scheduler.now;
      const got = await this.routed(namespace, "immutable-timestamp", asked + 1_000, (s) => s.immutableTimestamp(namespace, {})).catch(() => null);
      if (got !== null) this.history.immutable({ client: this.name, namespace, value: got.immutableTimestamp, sentAt: asked, receivedAt: this.scheduler.now, starts: [] });
    };
    await Promise.allSettled(txns.map((t, i) => this.keep(t, answer.lease.validForMs, at + holdFor, i === 0 ? readImmutable : undefined)));
  }

  private async stamp(): Promise<void> {
    const namespace = this.random.pick(this.plan.namespaces);
    const count = this.random.int(1, 5);
    const sentAt = this.scheduler.now;
    const answer = await this.routed(namespace, "timestamps", sentAt + 2_000, (s) => s.timestamps(namespace, { count })).catch(() => null);
    if (answer !== null) this.history.timestamps(namespace, answer.start, answer.count, sentAt, this.scheduler.now);
  }
}
