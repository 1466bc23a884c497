import { LockClient } from "@leasehold/client";
import { pino } from "pino";
import type { HistoryRecorder } from "../history/index.js";
import { sleep } from "./control-cluster.js";
import type { ExchangeLog } from "./exchange-log.js";
import type { ProbeGrant } from "./failure-evidence.js";
import type { KeptHold } from "./lock-keepers.js";

/** What {@link startHeldProbers} probes, how often, and where it records. */
export interface HeldProberOptions {
  readonly baseUrls: readonly string[];
  /**
   * The namespaces whose `k` is held, each by a keeper that holds it *now*: start the probers only
   * once every keeper's first grant arrived (a probe before it finds `k` free, is rightly granted,
   * and is no second holder).
   */
  readonly namespaces: readonly string[];
  /** Pause before each probe, per namespace. */
  readonly everyMs: number;
  /** The clients' `requestTimeoutMs`. */
  readonly requestTimeoutMs: number;
  /** The history the grants go into (its overlap check sees them). */
  readonly recorder: HistoryRecorder;
  /** Where each probe's exchanges are recorded (which server granted). Default: not recorded. */
  readonly exchanges?: ExchangeLog | undefined;
}

/** Running probers: their counts, the second holders found, and stop. */
export interface HeldProbers {
  readonly calls: { probes: number; granted: number };
  /** Every grant, with the exchanges of its call (see {@link describeProbeGrant}). */
  readonly granted: ProbeGrant[];
  stop(): Promise<void>;
}

/**
 * Every `everyMs`, per namespace, ask for the descriptor its keeper holds (`k`) without waiting
 * (`acquireTimeoutMs: 0`, which appends nothing to the shard's log, so the shard stays idle and its
 * standby in sync, as for a lock only refreshed). Since each keeper holds `k` from before the
 * first probe, a grant is a second holder: it goes into the history, into `grants`, and is
 * unlocked at once.
 */
export function startHeldProbers(options: HeldProberOptions): HeldProbers {
  const { recorder, exchanges } = options;
  const logger = pino({ level: "silent" });
  const calls = { probes: 0, granted: 0 };
  const granted: ProbeGrant[] = [];
  let stopping = false;
  const clients = options.namespaces.map((namespace) =>
    LockClient.http({ baseUrls: [...options.baseUrls], namespace, logger, requestTimeoutMs: options.requestTimeoutMs, dispatcher: exchanges?.dispatcher(`probe ${namespace}`) }),
  );
  const loop = async (client: LockClient, namespace: string): Promise<void> => {
    for (let n = 0; !stopping; n++) {
      await sleep(options.everyMs);
      if (stopping) return;
      const requestSentAt = recorder.now();
      const mark = exchanges?.exchanges.length ?? 0;
      calls.probes++;
      const answer = await client.lock([{ descriptor: "k", mode: "exclusive" }], { acquireTimeoutMs: 0 }).catch(() => undefined);
      if (answer?.status !== "acquired") continue;
      calls.granted++;
      const holder = `probe-${namespace}-${n}`;
      const grantReceivedAt = recorder.now();
      const fencingToken = answer.acquired[0]!.fencingToken;
      recorder.grant({ holder, descriptor: `${namespace}/k`, mode: "exclusive", fencingToken, requestSentAt, grantReceivedAt, guaranteeEndsAt: requestSentAt + answer.lease.validForMs });
      const exchanged = exchanges?.since(mark, `probe ${namespace}`) ?? [];
      const by = exchanged.filter((e) => e.status === 200).at(-1)?.origin ?? "?";
      granted.push({ key: `${namespace}/k`, sentAt: requestSentAt, grantedAt: grantReceivedAt, by, leaderId: answer.lease.leaderId, fencingToken: String(fencingToken), exchanges: exchanged });
      await client.unlock([answer.token]).catch(() => undefined);
      recorder.release(holder);
    }
  };
  const loops = clients.map((client, i) => loop(client, options.namespaces[i]!));
  return {
    calls,
    granted,
    async stop() {
      stopping = true;
      await Promise.all(loops);
      await Promise.all(clients.map((c) => c.close()));
    },
  };
}

/**
 * One probe grant as a line for the "no second holder" check: namespace, time, the server that
 * granted, `leaderId` and fencing token, and what the keepers' ledger says of `k` then: the hold
 * that still ran when the grant arrived (a second holder beside it); one that ended while the
 * probe's call was in flight (its keeper gave up and unlocked: which came first at the server,
 * the client cannot tell); or that none ran (the hold before had ended, by a lapse or loss the
 * held-throughout check reports too, or no keeper had been granted `k` yet).
 */
export function describeProbeGrant(grant: ProbeGrant, holds: readonly KeptHold[]): string {
  const mine = holds.filter((h) => h.key === grant.key && h.grantedAt <= grant.grantedAt);
  const running = mine.find((h) => h.endedAt === undefined || h.endedAt >= grant.grantedAt);
  const ending = mine.find((h) => h.endedAt !== undefined && h.endedAt >= grant.sentAt && h.endedAt < grant.grantedAt);
  const last = mine.at(-1);
  const beside =
    running !== undefined
      ? `while hold ${running.holder} ran (granted at ${running.grantedAt.toFixed(0)} ms, last refreshed at ${running.lastRefreshedAt.toFixed(0)} ms)`
      : ending !== undefined
        ? `as hold ${ending.holder} ended ${ending.end} at ${ending.endedAt!.toFixed(0)} ms (its unlock sent then), while the probe's call was in flight`
        : last !== undefined
          ? `with no hold running: ${last.holder} ended ${last.end} at ${last.endedAt?.toFixed(0)} ms`
          : "before any keeper was granted it";
  return `${grant.key} granted to a probe at ${grant.grantedAt.toFixed(0)} ms by ${grant.by} (leaderId ${grant.leaderId}, fencing token ${grant.fencingToken}) ${beside}`;
}
