import { LockClient } from "@leasehold/client";
import { pino } from "pino";
import { FencedCounter } from "../fenced-resource/index.js";
import type { HistoryRecorder } from "../history/index.js";
import { SeededRandom, deriveSeed } from "../seeded-random.js";
import { sleep } from "./control-cluster.js";
import type { ExchangeLog } from "./exchange-log.js";

/** How a kept hold ended. */
export type HoldEnd = "unlocked" | "lapsed" | "lost" | "running";

/** One lock a keeper held: the ledger the "no lock lost to a single failure" check reads. */
export interface KeptHold {
  readonly holder: string;
  /** `<namespace>/<descriptor>`. */
  readonly key: string;
  /** When the grant was received (the recorder's clock). */
  readonly grantedAt: number;
  /** When a refresh last answered the token as held (the grant's time until then). */
  lastRefreshedAt: number;
  /** When the hold ended: the unlock, the lapse, or the refresh that said it was gone. */
  endedAt: number | undefined;
  end: HoldEnd;
  /** For a loss: what the refresh answered. */
  detail?: string | undefined;
  /** Every explicit refresh of the hold, in order (a failing run's evidence). */
  readonly refreshes: RefreshRecord[];
}

/** One explicit refresh a keeper sent: when, what came back, and from which server. */
export interface RefreshRecord {
  /** Sent and answered (or failed), on the recorder's clock. */
  readonly sentAt: number;
  readonly answeredAt: number;
  /** `held` (same leaderId, token refreshed), `not held`, `other leader`, or the failure's text. */
  readonly outcome: string;
  /** The answer's `leaderId` and `validForMs` (unset when the call failed). */
  readonly leaderId?: string | undefined;
  readonly validForMs?: number | undefined;
  /** The call's exchanges as `<origin> <status or error>` (needs {@link LockKeeperOptions.exchanges}). */
  readonly servers: readonly string[];
}

/** How the keepers work. */
export interface LockKeeperOptions {
  readonly baseUrls: readonly string[];
  readonly namespaces: readonly string[];
  /** Keepers per namespace; they contend for one descriptor, `k`. */
  readonly keepersPerNamespace: number;
  /** A hold lasts from `holdMinMs` to `holdMaxMs` (uniform), long enough to span a fault and its failover. */
  readonly holdMinMs: number;
  readonly holdMaxMs: number;
  /** Explicit refresh every this many ms while holding. */
  readonly refreshEveryMs: number;
  /** Each lock call's `acquireTimeoutMs`. */
  readonly deadlineMs: number;
  /** The clients' `requestTimeoutMs`. */
  readonly requestTimeoutMs: number;
  readonly seed: number;
  /** Where each client's exchanges are recorded (which server answered what). Default: not recorded. */
  readonly exchanges?: ExchangeLog | undefined;
}

/** Running keepers: their ledger, and stop. */
export interface LockKeepers {
  readonly holds: KeptHold[];
  /** Lock calls made (grants, timeouts, failures) and refreshes sent. */
  readonly calls: { locks: number; refreshes: number };
  stop(): Promise<void>;
}

/**
 * Keepers: clients that hold an exclusive lock for seconds (so it spans a fault and its failover),
 * refresh it explicitly every `refreshEveryMs` and write a fenced counter at the end of each hold,
 * recording grants, guarantee extensions and releases in `recorder` (the exclusion and fencing
 * checks see them) and each hold in the ledger. A hold ends by unlock, by lapse (the guarantee ran
 * out while refreshes failed, or a refresh sent after it ran out found the lock gone: allowed), or
 * by loss: a refresh, sent while the guarantee still ran, answered without the token or under
 * another `leaderId` (the server no longer holds it).
 */
export function startLockKeepers(options: LockKeeperOptions, recorder: HistoryRecorder, counters: Map<string, FencedCounter>): LockKeepers {
  const holds: KeptHold[] = [];
  const calls = { locks: 0, refreshes: 0 };
  const logger = pino({ level: "silent" });
  const clients: LockClient[] = [];
  let stopping = false;
  let next = 0;

  /**
   * Hold one grant until its time, a lapse or a loss; answers how it ended. The first refresh goes
   * at once: a grant that waited in the queue arrives with its guarantee (counted from the
   * request's send) nearly or wholly spent.
   */
  const hold = async (client: LockClient, label: string, hold: KeptHold, token: string, leaderId: string, guaranteeEndsAt: number, untilMs: number): Promise<HoldEnd> => {
    let guarantee = guaranteeEndsAt;
    for (let first = true; !stopping && recorder.now() < untilMs; first = false) {
      if (!first) await sleep(options.refreshEveryMs);
      const sentAt = recorder.now();
      calls.refreshes++;
      const mark = options.exchanges?.exchanges.length ?? 0;
      const note = (outcome: string, leader?: string, validForMs?: number): void => {
        const servers = (options.exchanges?.since(mark, label) ?? []).filter((e) => e.path.endsWith("/refresh")).map((e) => `${e.origin} ${e.status ?? e.error ?? "in flight"}`);
        hold.refreshes.push({ sentAt, answeredAt: recorder.now(), outcome, leaderId: leader, validForMs, servers });
      };
      let answer;
      try {
        answer = await client.refresh([token], { signal: AbortSignal.timeout(options.requestTimeoutMs) });
      } catch (err) {
        note(err instanceof Error ? err.message.slice(0, 120) : String(err));
        if (recorder.now() >= guarantee) return "lapsed";
        continue;
      }
      const kept = answer.lease.leaderId === leaderId && answer.refreshed.includes(token);
      note(kept ? "held" : answer.lease.leaderId !== leaderId ? "other leader" : "not held", answer.lease.leaderId, answer.lease.validForMs);
      if (answer.lease.leaderId !== leaderId || !answer.refreshed.includes(token)) {
        // Sent once the guarantee had run out, "not held" is a lapse; sent before, a loss.
        if (sentAt >= guarantee) return "lapsed";
        hold.detail = answer.lease.leaderId !== leaderId ? `answered under leaderId ${answer.lease.leaderId}, granted under ${leaderId}` : "the refresh answered without the token";
        return "lost";
      }
      guarantee = Math.max(guarantee, sentAt + answer.lease.validForMs);
      recorder.extendGuarantee(hold.holder, guarantee);
      hold.lastRefreshedAt = recorder.now();
    }
    return recorder.now() < guarantee ? "unlocked" : "lapsed";
  };

  const loop = async (client: LockClient, label: string, namespace: string, rng: SeededRandom): Promise<void> => {
    const key = `${namespace}/k`;
    let counter = counters.get(key);
    if (counter === undefined) counters.set(key, (counter = new FencedCounter(key, recorder)));
    while (!stopping) {
      const sentAt = recorder.now();
      calls.locks++;
      let answer;
      try {
        answer = await client.lock([{ descriptor: "k", mode: "exclusive" }], { acquireTimeoutMs: options.deadlineMs });
      } catch {
        await sleep(20);
        continue;
      }
      if (answer.status !== "acquired") continue;
      const grantedAt = recorder.now();
      const fencingToken = answer.acquired[0]!.fencingToken;
      const entry: KeptHold = { holder: `k${next++}`, key, grantedAt, lastRefreshedAt: grantedAt, endedAt: undefined, end: "running", refreshes: [] };
      holds.push(entry);
      const guarantee = sentAt + answer.lease.validForMs;
      recorder.grant({ holder: entry.holder, descriptor: key, mode: "exclusive", fencingToken, requestSentAt: sentAt, grantReceivedAt: grantedAt, guaranteeEndsAt: guarantee });
      const access = { holder: entry.holder, fencingToken, mode: "exclusive" as const };
      const read = counter.read(access);
      const end = await hold(client, label, entry, answer.token, answer.lease.leaderId, guarantee, grantedAt + rng.int(options.holdMinMs, options.holdMaxMs));
      // Only a holder whose guarantee still runs may act on the resource.
      if (end === "unlocked" && read.accepted) counter.write(access, read.value + 1);
      entry.end = end;
      entry.endedAt = recorder.now();
      recorder.release(entry.holder, entry.endedAt);
      client.tryUnlock([answer.token]);
    }
  };

  const loops: Promise<void>[] = [];
  options.namespaces.forEach((namespace, n) => {
    for (let c = 0; c < options.keepersPerNamespace; c++) {
      const label = `keeper ${namespace} ${c}`;
      const dispatcher = options.exchanges?.dispatcher(label);
      const client = LockClient.http({ baseUrls: [...options.baseUrls], namespace, logger, requestTimeoutMs: options.requestTimeoutMs, dispatcher });
      clients.push(client);
      loops.push(loop(client, label, namespace, new SeededRandom(deriveSeed(options.seed, n, c, 7))));
    }
  });
  return {
    holds,
    calls,
    async stop() {
      stopping = true;
      await Promise.all(loops);
      await Promise.all(clients.map((c) => c.close()));
    },
  };
}
