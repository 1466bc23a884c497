import { LockClient, type LostLock } from "@leasehold/client";
import { sleep } from "./bench-cluster.js";
import { silentLogger } from "./silent-logger.js";
import { nowMs } from "./stats.js";

/**
 * ms from `from` until one of `urls` grants an exclusive lock on a descriptor nobody holds in
 * `namespace` (a raw `lock` with no wait, to each URL on a loop of its own, every 5 ms after its
 * answer): when a namespace grants fresh locks again after its leader went away. Answers the
 * `validForMs` of that grant too. Each URL is polled on its own so a slow answer from one server
 * (a 421 from a busy member, a request left to its 1 s timeout) never delays seeing the grant of
 * another: one round over every URL at once would wait for the slowest answer each time.
 */
export async function firstFreshGrant(urls: readonly string[], namespace: string, descriptor: string, from: number, timeoutMs = 30_000): Promise<{ ms: number; validForMs: number }> {
  const body = JSON.stringify({ locks: [{ descriptor, mode: "exclusive" }] });
  let granted: { ms: number; validForMs: number } | null = null;
  const poll = async (url: string): Promise<void> => {
    while (granted === null && nowMs() - from <= timeoutMs) {
      try {
        const res = await fetch(`${url}/v1/namespaces/${namespace}/lock`, { method: "POST", headers: { "content-type": "application/json" }, body, signal: AbortSignal.timeout(1_000) });
        const json = (await res.json()) as { status?: string; lease?: { validForMs: number } };
        if (res.status === 200 && json.status === "acquired") granted ??= { ms: nowMs() - from, validForMs: json.lease!.validForMs };
      } catch {
        // no answer in time, or the server is gone: poll on
      }
      if (granted === null) await sleep(5);
    }
  };
  await Promise.all(urls.map(poll));
  if (granted === null) throw new Error(`no server granted a fresh lock in ${namespace} within ${timeoutMs} ms`);
  return granted;
}

/**
 * Locks held through failures: one client per namespace (routed over every member, refreshing on
 * its own), `perNamespace` exclusive locks each. {@link lost} counts every token a refresh or
 * `lostLocks` said was gone: the "locks lost" of issue 21.
 */
export class HeldLocks {
  private readonly held = new Map<LockClient, string[]>();
  private readonly reported = new Set<string>();
  /** Tokens reported on `lostLocks`, by reason (what the note of a loss says). */
  readonly reasons: Record<string, number> = {};
  /** The longest `validForMs` a grant of these locks was answered with. */
  validForMs = 0;

  private constructor() {}

  /** Take the locks; throws when one is not granted within 10 s. */
  static async take(urls: readonly string[], namespaces: readonly string[], perNamespace: number): Promise<HeldLocks> {
    const locks = new HeldLocks();
    for (const namespace of namespaces) {
      const client = LockClient.http({ baseUrls: [...urls], namespace, logger: silentLogger() });
      client.lostLocks.subscribe((l: LostLock) => {
        if (l.reason === "client-closed") return;
        locks.reported.add(l.token);
        locks.reasons[l.reason] = (locks.reasons[l.reason] ?? 0) + 1;
      });
      const tokens: string[] = [];
      locks.held.set(client, tokens);
      for (let i = 0; i < perNamespace; i++) {
        const res = await client.lock([{ descriptor: `held-${i}`, mode: "exclusive" }], { acquireTimeoutMs: 10_000 });
        if (res.status !== "acquired") throw new Error(`held lock ${i} in ${namespace} was not granted within 10 s`);
        tokens.push(res.token);
        locks.validForMs = Math.max(locks.validForMs, res.lease.validForMs);
      }
    }
    return locks;
  }

  /** How many locks are held in all. */
  get count(): number {
    let n = 0;
    for (const tokens of this.held.values()) n += tokens.length;
    return n;
  }

  /**
   * Refresh every token now (re-sent while the cluster answers with errors, up to `timeoutMs`) and
   * answer how many are lost: not returned by the refresh, or reported on `lostLocks` since taken.
   */
  async lost(timeoutMs = 20_000): Promise<number> {
    const gone = new Set(this.reported);
    for (const [client, tokens] of this.held) {
      const end = nowMs() + timeoutMs;
      for (;;) {
        try {
          const res = await client.refresh(tokens);
          const kept = new Set(res.refreshed);
          for (const t of tokens) if (!kept.has(t)) gone.add(t);
          break;
        } catch (err) {
          if (nowMs() > end) throw err;
          await sleep(100);
        }
      }
    }
    return gone.size;
  }

  /** Stop refreshing (the locks lapse on the server). */
  async close(): Promise<void> {
    await Promise.all([...this.held.keys()].map((c) => c.close()));
  }
}

/** One lock acquisition of the paced load: when it started (ms, monotonic) and how long it took. */
export interface Acquisition {
  readonly at: number;
  readonly ms: number;
}

/**
 * A steady load of lock + tryUnlock: `callers` callers per namespace on one client each (routed
 * over every member), each pausing `pauseMs` between pairs. An acquisition's time runs from its
 * first `lock` call to the grant, including the caller's re-sends after an `UNAVAILABLE` answer
 * (10 ms apart), which is what an application waits through during a hand-over.
 */
export class PacedLoad {
  readonly acquisitions: Acquisition[] = [];
  /** `lock` calls that rejected (re-sent by the caller). */
  failures = 0;
  private running = true;
  private readonly done: Promise<unknown>;
  private readonly clients: LockClient[] = [];

  constructor(urls: readonly string[], namespaces: readonly string[], callers: number, pauseMs: number) {
    const loops: Promise<void>[] = [];
    for (const namespace of namespaces) {
      const client = LockClient.http({ baseUrls: [...urls], namespace, logger: silentLogger() });
      this.clients.push(client);
      for (let c = 0; c < callers; c++) loops.push(this.caller(client, c, pauseMs));
    }
    this.done = Promise.all(loops);
  }

  private async caller(client: LockClient, c: number, pauseMs: number): Promise<void> {
    let n = 0;
    while (this.running) {
      const at = nowMs();
      for (;;) {
        try {
          const res = await client.lock([{ descriptor: `load-${c}-${n++ % 64}`, mode: "exclusive" }], { acquireTimeoutMs: 10_000 });
          if (res.status === "acquired") client.tryUnlock([res.token]);
          else this.failures++;
          break;
        } catch {
          this.failures++;
          if (!this.running) return;
          await sleep(10);
        }
      }
      this.acquisitions.push({ at, ms: nowMs() - at });
      await sleep(pauseMs);
    }
  }

  /** The acquisitions that started in `[from, to)`. */
  between(from: number, to: number): number[] {
    return this.acquisitions.filter((a) => a.at >= from && a.at < to).map((a) => a.ms);
  }

  /** Stop the callers and close the clients. */
  async stop(): Promise<void> {
    this.running = false;
    await this.done;
    await Promise.all(this.clients.map((c) => c.close()));
  }
}
