import { LeaseholdError, type LockResponse, type RefreshResponse, type TimestampsResponse } from "@leasehold/protocol";
import type { Hold, SimHistory } from "./sim-history.js";
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
  call<T>(client: string, url: string, label: string, call: (service: SimService) => T | Promise<T> | { readonly answer: Promise<T> }): Promise<T>;
}

/** The part of a cluster member's lock service the clients use. */
export interface SimService {
  beginLock(namespace: string, request: unknown): LockResponse | { readonly answer: Promise<LockResponse> };
  refresh(namespace: string, request: unknown): Promise<RefreshResponse>;
  unlock(namespace: string, request: unknown): Promise<unknown>;
  timestamps(namespace: string, request: unknown): Promise<TimestampsResponse>;
}

/** What a client does, and how long it runs. */
export interface SimClientPlan {
  readonly namespaces: readonly string[];
  readonly descriptors: readonly string[];
  /** The client stops starting new work at this true time. */
  readonly until: number;
  /** Chance that a lock request is sent twice with one `requestId` (a hedged duplicate on another connection). Default 0.2. */
  readonly hedge?: number | undefined;
}

/**
 * One simulated client: it locks (exclusive or shared, with a `requestId`, waiting a while),
 * follows `421 NOT_LEADER`, re-sends after `503` or a broken connection with the same `requestId`
 * until its own deadline, sometimes sends a hedged duplicate, holds the lock for a while refreshing
 * it at a third of its `validForMs`, unlocks without waiting, and asks for timestamps. Everything
 * it was told goes in the {@link SimHistory}.
 */
/**
 * How long a client waits for an answer beyond what the request itself may wait on the server
 * (a lock's `acquireTimeoutMs`) before it gives up on the connection and re-sends the same
 * request (same `requestId`): shorter than a standby's late mark (a third of the leader lease), so
 * an answer held for a partitioned standby's acknowledgement is re-sent while still held.
 */
const REQUEST_TIMEOUT_MS = 250;

export class SimClient {
  private readonly leaders = new Map<string, string>();
  private serial = 0;

  constructor(
    readonly name: string,
    private readonly scheduler: Scheduler,
    private readonly servers: SimServers,
    private readonly random: SimRandom,
    private readonly history: SimHistory,
    private readonly plan: SimClientPlan,
  ) {}

  /** Begin the client's loop. */
  start(): void {
    this.next();
  }

  private next(): void {
    if (this.scheduler.now >= this.plan.until) return;
    const pause = this.random.int(5, 120);
    this.scheduler.after(pause, this.name, "next", () => {
      const work = this.random.chance(0.25) ? this.stamp() : this.lockAndHold();
      void work.then(
        () => this.next(),
        () => this.next(),
      );
    });
  }

  private wait(ms: number): Promise<void> {
    return new Promise((resolve) => this.scheduler.after(ms, this.name, "wait", resolve));
  }

  private url(namespace: string): string {
    return this.leaders.get(namespace) ?? this.random.pick(this.servers.urls());
  }

  /**
   * Send `call` about `namespace` until it is answered or `deadline`: a 421 names the leader to
   * send to, a 503 or a broken connection is re-sent after a short backoff (to another server
   * when the leader is unknown). Answers `null` when the deadline passed.
   */
  private async routed<T>(
    namespace: string,
    label: string,
    deadline: number,
    call: (service: SimService) => T | Promise<T> | { readonly answer: Promise<T> },
    patienceMs = REQUEST_TIMEOUT_MS,
  ): Promise<T | null> {
    for (let attempt = 0; this.scheduler.now < deadline; attempt++) {
      const url = this.url(namespace);
      try {
        return await this.withTimeout(this.servers.call(this.name, url, label, call), patienceMs);
      } catch (err) {
        if (err instanceof LeaseholdError && err.code === "NOT_LEADER") {
          const leader = typeof err.details?.leaderUrl === "string" ? err.details.leaderUrl : null;
          if (leader !== null && leader !== url) this.leaders.set(namespace, leader);
          else this.leaders.delete(namespace);
          if (leader !== null && leader !== url) continue;
        } else if (err instanceof LeaseholdError && err.code !== "UNAVAILABLE") {
          throw err;
        } else this.leaders.delete(namespace);
        const retryAfter = err instanceof LeaseholdError && typeof err.details?.retryAfterMs === "number" ? err.details.retryAfterMs : 50;
        await this.wait(Math.min(retryAfter, 200) * (0.5 + this.random.float()) + Math.min(attempt, 5) * 10);
      }
    }
    return null;
  }

  /**
   * `call`, or a timeout after `ms`: the client gives up on the connection (its answer, arriving
   * later, is dropped) and re-sends; the server may still grant the first send meanwhile.
   */
  private withTimeout<T>(call: Promise<T>, ms: number): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      let done = false;
      const cancel = this.scheduler.after(ms, this.name, "request timeout", () => {
        if (done) return;
        done = true;
        reject(new Error(`simulated request timed out after ${ms} ms`));
      });
      // The first of the two settles it; an answer cancels the timeout, so no dead event runs.
      const settle = (fn: () => void): void => {
        if (done) return;
        done = true;
        cancel();
        fn();
      };
      call.then(
        (value) => settle(() => resolve(value)),
        (err: unknown) => settle(() => reject(err instanceof Error ? err : new Error(String(err)))),
      );
    });
  }

  private async lockAndHold(): Promise<void> {
    const namespace = this.random.pick(this.plan.namespaces);
    const descriptor = this.random.pick(this.plan.descriptors);
    const mode = this.random.chance(0.8) ? "exclusive" : "shared";
    const requestId = `${this.name}-${++this.serial}`;
    const acquireTimeoutMs = this.random.pick([0, 200, 1_000, 3_000]);
    const request = { locks: [{ descriptor, mode }], acquireTimeoutMs, requestId };
    const sentAt = this.scheduler.now;
    const deadline = sentAt + acquireTimeoutMs + 2_000;
    const lock = (service: SimService) => service.beginLock(namespace, request);
    // A lock request may wait up to its acquireTimeoutMs on the server: the client's patience is that plus the usual.
    const patience = acquireTimeoutMs + REQUEST_TIMEOUT_MS;
    const holdFor = this.random.int(50, 6_000);
    // Each grant is recorded the moment it arrives (a hedged duplicate may still be in flight): the
    // first is held and refreshed at once; a later one with another token (the same requestId
    // granted twice) is recorded too, then let go.
    let held: Promise<void> | null = null;
    let token: string | null = null;
    const onAnswer = (answer: LockResponse | null): void => {
      if (answer === null || answer.status !== "acquired") return;
      const granted = answer.acquired[0]!;
      if (token === answer.token) return;
      const hold = this.history.granted(
        { client: this.name, namespace, descriptor, mode, token: answer.token, fencingToken: granted.fencingToken, leaderId: answer.lease.leaderId, sentAt, receivedAt: this.scheduler.now },
        answer.lease.validForMs,
      );
      if (token === null) {
        token = answer.token;
        held = this.keep(hold, answer.lease.validForMs, this.scheduler.now + holdFor);
      } else this.letGo(hold);
    };
    const sends = [this.routed(namespace, "lock", deadline, lock, patience).then(onAnswer)];
    if (this.random.chance(this.plan.hedge ?? 0.2)) {
      sends.push(this.wait(this.random.int(20, 80)).then(() => this.routed(namespace, "lock (hedged)", deadline, lock, patience).then(onAnswer)));
    }
    await Promise.allSettled(sends);
    if (held !== null) await held;
  }

  /** Unlock `hold` now without waiting for the answer (the client stops using it at once). */
  private letGo(hold: Hold): void {
    this.history.released(hold, this.scheduler.now);
    void this.routed(hold.namespace, "unlock", this.scheduler.now + 1_000, (s) => s.unlock(hold.namespace, { tokens: [hold.token] })).catch(() => null);
  }

  /** Hold until `until`, refreshing at a third of `validForMs`; then unlock without waiting for the answer. */
  private async keep(hold: Hold, validForMs: number, until: number): Promise<void> {
    let every = Math.max(10, Math.floor(validForMs / 3));
    while (this.scheduler.now < until) {
      await this.wait(Math.min(every, until - this.scheduler.now));
      if (this.scheduler.now >= until) break;
      const sentAt = this.scheduler.now;
      const answer = await this.routed(hold.namespace, "refresh", sentAt + every, (s) => s.refresh(hold.namespace, { tokens: [hold.token] })).catch(() => null);
      if (answer === null) continue;
      const kept = answer.refreshed.includes(hold.token);
      this.history.refreshed(hold, sentAt, kept, answer.lease.validForMs, this.scheduler.now);
      if (!kept) return;
      every = Math.max(10, Math.floor(answer.lease.validForMs / 3));
    }
    this.letGo(hold);
  }

  private async stamp(): Promise<void> {
    const namespace = this.random.pick(this.plan.namespaces);
    const count = this.random.int(1, 5);
    const sentAt = this.scheduler.now;
    const answer = await this.routed(namespace, "timestamps", sentAt + 2_000, (s) => s.timestamps(namespace, { count })).catch(() => null);
    if (answer !== null) this.history.timestamps(namespace, answer.start, answer.count, sentAt, this.scheduler.now);
  }
}
