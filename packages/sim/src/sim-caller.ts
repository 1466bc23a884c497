import { LeaseholdError } from "@leasehold/protocol";
import type { SimServers, SimService } from "./sim-client.js";
import type { SimRandom } from "./sim-random.js";
import type { Scheduler } from "./scheduler.js";

/**
 * How long a client waits for an answer beyond what the request itself may wait on the server
 * (a lock's `acquireTimeoutMs`) before it gives up on the connection and re-sends the same
 * request (same `requestId`): shorter than a standby's late mark (a third of the leader lease), so
 * an answer held for a partitioned standby's acknowledgement is re-sent while still held.
 */
export const REQUEST_TIMEOUT_MS = 250;

/**
 * How long past the end of its own wait a client keeps re-sending a waiting request (a lock, a
 * wait-for-locks) whose answers were lost or refused: long enough for several immediate re-sends
 * (each asks for no wait by then), so an answer lost at the wait's end is not the last word.
 */
export const WAIT_GRACE_MS = 2_000;

/** One call a simulated client makes of a server's service. */
export type SimCall<T> = (service: SimService) => T | Promise<T> | { readonly answer: Promise<T> };

/**
 * What every simulated client does to reach the cluster, as the real HTTP client does: it keeps a
 * leader per namespace, follows `421 NOT_LEADER`, re-sends after `503`, a broken connection or no
 * answer in time (the same request, so the same `requestId`), with jittered backoff, until the
 * call's own deadline.
 */
export abstract class SimCaller {
  private readonly leaders = new Map<string, string>();

  constructor(
    /** The client's name in the trace. */
    readonly name: string,
    protected readonly scheduler: Scheduler,
    protected readonly servers: SimServers,
    protected readonly random: SimRandom,
  ) {}

  /** A promise that settles `ms` of simulated time from now. */
  protected wait(ms: number): Promise<void> {
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
  protected routed<T>(namespace: string, label: string, deadline: number, call: SimCall<T>, patienceMs = REQUEST_TIMEOUT_MS): Promise<T | null> {
    return this.route(namespace, label, () => deadline, () => ({ call, patienceMs }));
  }

  /**
   * Send a request that may wait on the server (a lock, a wait-for-locks), first asked at
   * `wait.sentAt` to wait `wait.waitMs`, as {@link routed} does until {@link WAIT_GRACE_MS} after
   * that wait ends. As the real client does (cluster-transport.ts), every send asks the server to
   * wait only what is left of it (`call` is given that, in whole ms: the full wait while none has
   * passed) and is given that plus {@link REQUEST_TIMEOUT_MS} to answer: a re-send never asks the
   * server to hold it past the client's own deadline, where a grant would reach no one. With
   * `wait.full` (clients that re-send the same body: `--full-wait-resends`) every send asks for the whole
   * wait, and the client keeps on until the grace after its latest send's wait.
   */
  protected routedWait<T>(namespace: string, label: string, wait: { readonly sentAt: number; readonly waitMs: number; readonly full?: boolean | undefined }, call: (waitMs: number) => SimCall<T>): Promise<T | null> {
    if (wait.full === true) {
      // Every send asks for the whole wait (a generic retry of the same body): the client's own
      // deadline moves with its latest send, so the server has that send's whole wait to answer it.
      let lastSentAt = wait.sentAt;
      return this.route(namespace, label, () => lastSentAt + wait.waitMs + WAIT_GRACE_MS, () => {
        lastSentAt = this.scheduler.now;
        return { call: call(wait.waitMs), patienceMs: wait.waitMs + REQUEST_TIMEOUT_MS };
      });
    }
    const until = wait.sentAt + wait.waitMs;
    return this.route(namespace, label, () => until + WAIT_GRACE_MS, () => {
      const left = Math.min(wait.waitMs, Math.max(0, Math.ceil(until - this.scheduler.now)));
      return { call: call(left), patienceMs: left + REQUEST_TIMEOUT_MS };
    });
  }

  private async route<T>(namespace: string, label: string, deadline: () => number, send: () => { readonly call: SimCall<T>; readonly patienceMs: number }): Promise<T | null> {
    for (let attempt = 0; this.scheduler.now < deadline(); attempt++) {
      const url = this.url(namespace);
      try {
        const { call, patienceMs } = send();
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
}
