import { onAbort } from "@leasehold/protocol";
import { fullJitterBackoff } from "./full-jitter-backoff.js";
import type { ServerTarget } from "./server-target.js";
import type { ShardMap } from "./shard-map.js";

/** An HTTP answer as the router sees it: status, body, and the 503's `retry-after` in ms. */
export interface RoutedAnswer {
  readonly status: number;
  readonly text: string;
  /** From the `retry-after` header (whole seconds), when the answer had one. */
  readonly retryAfterMs?: number | undefined;
}

/** One call to route; see {@link ClusterRouter.route}. */
export interface RoutedCall {
  /** The namespace whose shard leader serves the call; undefined for calls any server answers (health). */
  readonly namespace: string | undefined;
  /** How long the call may spend waiting between re-sends, in ms from now: its own deadline. */
  readonly budgetMs: number;
  readonly signal: AbortSignal | undefined;
  /** Whether a failure with no answer may be re-sent to another server (the request then surely did nothing, or is idempotent). */
  readonly resendAfter: (err: unknown) => boolean;
  /** One attempt at `target`, given what is left of the budget. Rejects when no answer came. */
  readonly attempt: (target: ServerTarget, remainingMs: number) => Promise<RoutedAnswer>;
  /** An answer already received for this call (from `target`), handled before any attempt. */
  readonly first?: { readonly target: ServerTarget; readonly answer: RoutedAnswer } | undefined;
}

/** Options of {@link ClusterRouter}. */
export interface ClusterRouterOptions {
  readonly map: ShardMap;
  /** Monotonic ms. */
  readonly now: () => number;
  /** Full-jitter backoff between re-sends after 503 and connection failures; undefined: no such re-sends. */
  readonly backoff: { readonly baseMs: number; readonly capMs: number } | undefined;
  /** Uniform in [0, 1); `Math.random` unless a test passes its own. */
  readonly random?: (() => number) | undefined;
}

/**
 * Most `421` answers followed at once in one round of a call (a round ends with a backoff).
 * Servers can disagree for a moment while a shard changes hands (each names the leader it last
 * knew); past this many, the call waits a backoff and asks the map again instead of bouncing
 * between them, then follows 421s afresh.
 */
export const MAX_HOPS = 4;

/**
 * Sends each call of a cluster client to its namespace's shard leader (PROTOCOL.md "Cluster
 * mode") and deals with what comes back:
 * - `421 NOT_LEADER`: re-sent at once to `details.leaderUrl` (at most {@link MAX_HOPS} times per
 *   round), which also becomes the shard's leader in the map when the map knew none or the 421
 *   came from the map's own leader ({@link ShardMap.hint}); the map is refreshed in the
 *   background (at once when the 421 contradicts it, else at most every `minIntervalMs`).
 * - `503`, and failures with no answer that the call allows re-sending after: the map is
 *   refreshed; another server that has not failed in this round is tried at once, else the call
 *   sleeps a full-jitter backoff (at least the answer's `retryAfterMs` / `retry-after`) and tries
 *   again.
 * - Everything stays within the call's budget, the wait for the first map included: a wait that
 *   would end past it is not taken, and the last answer (or error) is the call's outcome. The
 *   signal aborts any wait. Each backoff starts a new round: servers that failed may be tried
 *   again and up to {@link MAX_HOPS} 421s followed again.
 */
export class ClusterRouter {
  readonly #options: ClusterRouterOptions;
  /** The last server that answered: calls with no known leader start there. */
  #preferred: ServerTarget | undefined;

  constructor(options: ClusterRouterOptions) {
    this.#options = options;
  }

  /** The final answer of `call` (any status: the caller turns non-2xx into errors); rejects with the last failure. */
  async route(call: RoutedCall): Promise<RoutedAnswer> {
    const { map, now, backoff } = this.#options;
    const deadline = now() + call.budgetMs;
    // The first map is waited for within the call's own deadline: past it, the call goes to the
    // members in turn and follows their 421s (the fetch runs on for the next calls).
    if (call.namespace !== undefined && !map.loaded) await untilAborted(withinMs(map.ready(), deadline - now()), call.signal);
    /** Servers that gave no answer in this round. */
    const avoid = new Set<string>();
    let hops = 0;
    let waits = 0;
    let next: ServerTarget | undefined;
    let pending = call.first;
    let lastError: unknown;
    const pause = async (atLeastMs: number): Promise<boolean> => {
      if (backoff === undefined) return false;
      // The same full-jitter backoff as the single-server retries (attempts count from 1 there).
      const delay = Math.max(atLeastMs, fullJitterBackoff(++waits, { baseMs: backoff.baseMs, capMs: backoff.capMs, random: this.#options.random }));
      if (now() + delay > deadline) return false;
      await sleep(delay, call.signal);
      // A new round: every server may be tried again, and 421s followed again (the map was
      // refreshed meanwhile, and servers that disagreed may agree by now).
      avoid.clear();
      hops = 0;
      return true;
    };
    for (;;) {
      let target: ServerTarget;
      let answer: RoutedAnswer;
      if (pending !== undefined) {
        ({ target, answer } = pending);
        pending = undefined;
      } else {
        const picked = next ?? this.#pick(call.namespace, avoid);
        next = undefined;
        if (picked === undefined) {
          // Every server failed in this round.
          if (await pause(0)) continue;
          throw lastError;
        }
        target = picked;
        try {
          answer = await call.attempt(target, deadline - now());
        } catch (err) {
          if (call.signal?.aborted || backoff === undefined || !call.resendAfter(err)) throw err;
          lastError = err;
          avoid.add(target.key);
          void map.refresh();
          continue;
        }
      }
      if (answer.status === 421) {
        const leader = leaderOf(answer.text, map);
        const shard = call.namespace === undefined ? undefined : map.shardOf(call.namespace);
        // A 421 that contradicts the map (its leader said no, or another leader is named) means
        // the map may be stale: refresh even if it just loaded, since the new term (its epoch
        // and leaderId) comes from it.
        const mapLeader = shard === undefined ? undefined : map.leader(shard);
        void map.refresh(mapLeader !== undefined && (mapLeader === target || (leader !== undefined && mapLeader !== leader)));
        if (leader !== undefined && shard !== undefined) map.hint(shard, target, leader);
        if (leader !== undefined && leader.key !== target.key && !avoid.has(leader.key) && hops < MAX_HOPS) {
          hops++;
          next = leader;
          continue;
        }
        if (await pause(0)) continue;
        return answer;
      }
      if (answer.status === 503 && backoff !== undefined) {
        void map.refresh();
        // A member that is not the shard's known leader has nothing better to say next time:
        // with no leader known, the next try starts at the member after it.
        const shard = call.namespace === undefined ? undefined : map.shardOf(call.namespace);
        if (shard === undefined || map.leader(shard) !== target) this.#preferred = after(map.servers(), target);
        if (await pause(retryAfterOf(answer))) continue;
        return answer;
      }
      this.#preferred = target;
      return answer;
    }
  }

  /** The shard's leader if known and not failed in this round, else the next server that has not failed, from the preferred one. */
  #pick(namespace: string | undefined, avoid: ReadonlySet<string>): ServerTarget | undefined {
    const { map } = this.#options;
    const shard = namespace === undefined ? undefined : map.shardOf(namespace);
    const leader = shard === undefined ? undefined : map.leader(shard);
    if (leader !== undefined && !avoid.has(leader.key)) return leader;
    const servers = map.servers();
    const from = this.#preferred === undefined ? 0 : Math.max(0, servers.indexOf(this.#preferred));
    for (let i = 0; i < servers.length; i++) {
      const server = servers[(from + i) % servers.length]!;
      if (!avoid.has(server.key)) return server;
    }
    return undefined;
  }
}

/** The server after `target` in `servers` (the first when `target` is not there). */
function after(servers: readonly ServerTarget[], target: ServerTarget): ServerTarget | undefined {
  return servers[(servers.indexOf(target) + 1) % servers.length];
}

/** The `leaderUrl` of a 421's error body, as a known target; undefined when absent or not a URL. */
function leaderOf(text: string, map: ShardMap): ServerTarget | undefined {
  const url = detailsOf(text)?.["leaderUrl"];
  return typeof url === "string" ? map.target(url) : undefined;
}

/** How long a 503 asks to be left alone, in ms: `details.retryAfterMs`, else the `retry-after` header, else 0. */
function retryAfterOf(answer: RoutedAnswer): number {
  const ms = detailsOf(answer.text)?.["retryAfterMs"];
  if (typeof ms === "number" && Number.isFinite(ms) && ms >= 0) return ms;
  return answer.retryAfterMs ?? 0;
}

function detailsOf(text: string): Record<string, unknown> | undefined {
  try {
    const body: unknown = JSON.parse(text);
    if (typeof body !== "object" || body === null || !("error" in body)) return undefined;
    const { error } = body;
    if (typeof error !== "object" || error === null || !("details" in error)) return undefined;
    const { details } = error;
    return typeof details === "object" && details !== null ? (details as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** Resolves when `promise` settles or `ms` have passed, whichever is first (the promise itself runs on). */
function withinMs(promise: Promise<void>, ms: number): Promise<void> {
  if (ms <= 0) return Promise.resolve();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)));
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** `promise`, or a rejection as soon as `signal` aborts (the promise itself runs on). */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return promise;
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const off = onAbort(signal, () => reject(signal.reason));
    promise.then(
      (value) => (off(), resolve(value)),
      (err: unknown) => (off(), reject(err)),
    );
  });
}

/**
 * Wait `ms`, or reject with the signal's reason as soon as it aborts. Not `timers/promises`'
 * `setTimeout` with `{ signal }`: that adds a listener per call, and many calls backing off at once
 * on one shared signal (a leader change under load) would pass Node's listener warning threshold.
 */
function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  if (signal === undefined) return new Promise((resolve) => setTimeout(resolve, ms));
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<void>((resolve, reject) => {
    const off = onAbort(signal, () => {
      clearTimeout(timer);
      reject(signal.reason);
    });
    const timer = setTimeout(() => (off(), resolve()), ms);
  });
}
