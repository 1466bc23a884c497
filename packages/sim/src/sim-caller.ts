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
  protected async routed<T>(namespace: string, label: string, deadline: number, call: SimCall<T>, patienceMs = REQUEST_TIMEOUT_MS): Promise<T | null> {
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
}
