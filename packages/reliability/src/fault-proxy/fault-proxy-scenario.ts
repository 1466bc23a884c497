import { LockClient, type LostLockReason } from "@leasehold/client";
import { startServer } from "@leasehold/server";
import { pino } from "pino";
import { checkGrants, type GrantFigures } from "./check-grants.js";
import { ClientLedger } from "./client-ledger.js";
import { runClientWorkload } from "./client-workload.js";
import type { FaultCounts, FaultRates } from "./fault-kinds.js";
import { startFaultProxy, type MsRange } from "./fault-proxy.js";
import { runRawWorkload } from "./raw-workload.js";
import { tapService } from "./server-tap.js";
import { settleWithin } from "../settle-within.js";
import { startTableSampler } from "./table-sampler.js";
import { Violations } from "../violations.js";

/** Sizes and rates of one run of {@link runFaultProxyScenario}. */
export interface FaultProxyScenarioConfig {
  /** Seed of the proxy's faults and of every loop's choices (printed, to replay a failure). */
  readonly seed: number;
  /** How long the load runs, in ms. */
  readonly loadMs: number;
  /** The server's `leaseMs` (its `validForMs` is the default, half of it). */
  readonly leaseMs: number;
  /** `LockClient.http` clients (even ones with lock batching, odd ones without) and concurrent loops on each. */
  readonly clients: number;
  readonly loopsPerClient: number;
  /** Raw HTTP loops (explicit requestIds, retries under the test's control). */
  readonly rawLoops: number;
  /** Descriptors per namespace (contention rises as this falls). */
  readonly descriptors: number;
  /** Longest `acquireTimeoutMs` drawn. */
  readonly maxWaitMs: number;
  /** The clients' `requestTimeoutMs` (and the raw loops' grace past their wait). */
  readonly requestTimeoutMs: number;
  /** Fault rates per chunk, each direction. */
  readonly toServer: FaultRates;
  readonly toClient: FaultRates;
  readonly delayMs: MsRange;
  readonly lingerMs: MsRange;
  /** How often the lock table is sampled, in ms. */
  readonly sampleEveryMs: number;
}

/** Everything a run measured. */
export interface FaultProxyScenarioResult {
  readonly config: FaultProxyScenarioConfig;
  readonly seconds: number;
  readonly proxy: FaultCounts;
  readonly violations: Violations;
  readonly ledger: ClientLedger;
  readonly grants: GrantFigures;
  readonly samples: number;
  readonly maxHoldersSeen: number;
  readonly lostLocks: Readonly<Record<string, number>>;
  readonly clientWarnings: Readonly<Record<string, number>>;
  readonly serverMetrics: Readonly<Record<string, number>>;
  /** Refresh, unlock and lock-cancel calls the server's service saw. */
  readonly serverCalls: { readonly refreshCalls: number; readonly unlockCalls: number; readonly cancelCalls: number };
  /** ms from the end of the run (clients closed, proxy closed) to the empty-table check. */
  readonly drainMs: number;
  readonly lockBoundMs: number;
  readonly callBoundMs: number;
  readonly stuckProbes: number;
  /**
   * Of the LockClient grants already lapsed by the client's measure on return, those whose request
   * waited `validForMs` or longer in the server's queue (the tap's own clock): the network cannot
   * explain those.
   */
  readonly lapsedAfterQueueWait: number;
}

/** The two namespaces: one for LockClients, one for raw HTTP. */
export const CLIENT_NAMESPACE = "proxy-clients";
export const RAW_NAMESPACE = "proxy-raw";

const RETRIES = 6; // the client's default retry budget (docs/client.md)
const BACKOFF_TOTAL_MS = 100 + 200 + 400 + 800 + 1_600 + 2_000;

/**
 * The longest a client call may take to settle when nothing hangs, from the client's own settings:
 * up to two polls (acquireLocks re-polls once when the server's timeout beats the client's
 * deadline), each up to 1 + {@link RETRIES} attempts, each waiting at most its wait plus
 * `requestTimeoutMs` for headers and again for the body, plus the proxy's delays; plus every backoff
 * and 2 s of scheduling slack. Loose on purpose: it only has to separate "slow" from "never".
 */
export function operationBoundMs(waitMs: number, config: FaultProxyScenarioConfig): number {
  const attempt = 2 * (waitMs + config.requestTimeoutMs) + 2 * config.delayMs.max;
  return (waitMs > 0 ? 2 : 1) * (RETRIES + 1) * attempt + BACKOFF_TOTAL_MS + 2_000;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * One run of section 2b: a real `startServer` (in this process, so its lock service can be tapped
 * and sampled), the fault proxy in front of it, LockClients and raw HTTP loops through the proxy
 * for `loadMs`; then the clients close, the proxy closes, one lease (plus 500 ms for the reaping
 * timer) passes, and the table must be empty and every descriptor free. Every check counts into
 * `violations`; nothing here throws on a violation (the test asserts the total).
 */
export async function runFaultProxyScenario(config: FaultProxyScenarioConfig): Promise<FaultProxyScenarioResult> {
  const started = performance.now();
  const violations = new Violations();
  const unhandled = (reason: unknown): void => violations.add("unhandled-rejection", String(reason));
  process.on("unhandledRejection", unhandled);

  const server = await startServer({ leaseMs: config.leaseMs });
  // Closed in `finally` whatever happens, so a failed run never leaks a server, a proxy or timers.
  const cleanups: (() => Promise<unknown> | void)[] = [() => server.close()];
  try {
    const port = Number(new URL(server.url).port);
    const tap = tapService(server.service);
    const ledger = new ClientLedger(tap, violations);
    const namespaces = [CLIENT_NAMESPACE, RAW_NAMESPACE];
    const firstNumber = new Map(namespaces.map((ns) => [ns, server.service.snapshot(ns).nextTimestamp]));
    const descriptors = Array.from({ length: config.descriptors }, (_, i) => `d${i}`);

    const proxy = await startFaultProxy({
      target: { port },
      seed: config.seed,
      toServer: config.toServer,
      toClient: config.toClient,
      delayMs: config.delayMs,
      lingerMs: config.lingerMs,
    });
    cleanups.push(() => proxy.close());

    const warnings: Record<string, number> = {};
    const logger = pino(
      { level: "warn" },
      {
        write(line: string) {
          const entry = JSON.parse(line) as { level: number; msg: string };
          warnings[entry.msg] = (warnings[entry.msg] ?? 0) + 1;
          // The client logs at error only for its own bugs ("a bug" in the message).
          if (entry.level >= 50) violations.add("client-logged-error", entry.msg);
        },
      },
    );
    const lostLocks: Partial<Record<LostLockReason, number>> = {};
    // Half batch their lock calls (lock-batch and lock-cancel on the wire), half send one lock per call.
    const clients = Array.from({ length: config.clients }, (_, i) =>
      LockClient.http({ baseUrl: proxy.url, namespace: CLIENT_NAMESPACE, requestTimeoutMs: config.requestTimeoutMs, lockBatching: i % 2 === 0, logger }),
    );
    cleanups.push(() => Promise.all(clients.map((c) => c.close())));
    for (const client of clients) client.lostLocks.subscribe(({ reason }) => (lostLocks[reason] = (lostLocks[reason] ?? 0) + 1));

    const sampler = startTableSampler({ service: server.service, tap, namespaces, leaseMs: config.leaseMs, intervalMs: config.sampleEveryMs, violations });
    cleanups.push(() => sampler.stop());
    const stopAt = performance.now() + config.loadMs;
    const stop = (): boolean => performance.now() >= stopAt;
    const lockBoundMs = (waitMs: number): number => operationBoundMs(waitMs, config);
    const callBoundMs = operationBoundMs(0, config);
    const hold = { min: 0, max: Math.round(config.leaseMs / 3) };

    await Promise.all([
      runClientWorkload({
        clients,
        loopsPerClient: config.loopsPerClient,
        namespace: CLIENT_NAMESPACE,
        descriptors,
        seed: config.seed,
        stop,
        maxWaitMs: config.maxWaitMs,
        abortRate: 0.15,
      ownRequestIdRate: 0.8,
        sharedRate: 0.25,
        holdMs: hold,
        unlockRate: 0.5,
        refreshRate: 0.2,
        lockBoundMs,
        callBoundMs,
        ledger,
        violations,
      }),
      runRawWorkload({
        port: proxy.port,
        namespace: RAW_NAMESPACE,
        descriptors,
        loops: config.rawLoops,
        seed: config.seed,
        stop,
        maxWaitMs: config.maxWaitMs,
        answerGraceMs: config.requestTimeoutMs,
        abandonRate: 0.15,
        retryRate: 0.8,
        maxAttempts: 5,
        resendRate: 0.3,
        refreshRate: 0.2,
        sharedRate: 0.25,
        holdMs: hold,
        ledger,
        violations,
      }),
    ]);

    for (const client of clients) {
      ledger.op("close");
      const closed = await settleWithin(client.close(), callBoundMs);
      if (!closed.settled) violations.add("hung-operation", `close() did not settle within ${callBoundMs} ms`);
      else if (!closed.ok) violations.add("unexpected-error", `close() rejected: ${String(closed.error)}`);
    }
    await proxy.close();
    const quietAt = performance.now();
    // Every token was last renewed before now; one lease later the server must have reaped it.
    await sleep(config.leaseMs + 500);
    sampler.stop();
    const drainMs = performance.now() - quietAt;

    for (const ns of namespaces) {
      const snap = server.service.snapshot(ns);
      if (snap.descriptors.length > 0 || snap.heldTokens > 0 || snap.waitingRequests > 0) {
        violations.add("table-not-empty", `${ns} ${drainMs.toFixed(0)} ms after the run: ${JSON.stringify(snap).slice(0, 300)}`);
      }
    }
    const metrics = server.service.metrics();
    if (metrics.heldLocks !== 0 || metrics.heldTokens !== 0 || metrics.waitingRequests !== 0) {
      violations.add("table-not-empty", `metrics after the run: ${JSON.stringify(metrics)}`);
    }

    const issued = new Map(namespaces.map((ns) => [ns, { first: firstNumber.get(ns) ?? 1, next: server.service.snapshot(ns).nextTimestamp }]));
    const grants = checkGrants({ tap, leaseMs: config.leaseMs, received: ledger.received, issued, violations });

    const validForMs = Math.floor(config.leaseMs / 2); // the server's default
    const lapsedAfterQueueWait = ledger.lapsedOnReturn.filter(({ token }) =>
      tap.calls.some((call) => call.token === token && call.waited && (call.end ?? call.begin) - call.begin >= validForMs),
    ).length;
    // The client gives every lock call a requestId (docs/client.md), so its transport may retry it.
    for (const call of tap.calls) {
      if (call.namespace === CLIENT_NAMESPACE && call.requestId === undefined) {
        violations.add("client-sets-request-id", `a LockClient lock call reached the server without a requestId (answered ${call.outcome})`);
      }
    }

    // No descriptor is stuck: an unproxied client takes each one exclusively without waiting.
    let stuckProbes = 0;
    const direct = LockClient.http({ baseUrl: server.url, namespace: CLIENT_NAMESPACE, logger });
    const directRaw = LockClient.http({ baseUrl: server.url, namespace: RAW_NAMESPACE, logger });
    cleanups.push(() => Promise.all([direct.close(), directRaw.close()]));
    for (const client of [direct, directRaw]) {
      for (const descriptor of descriptors) {
        stuckProbes++;
        const answer = await client.lock([{ descriptor, mode: "exclusive" }]);
        if (answer.status !== "acquired") violations.add("descriptor-stuck", `${client.namespace}/${descriptor} could not be taken after the run`);
        else await client.unlock([answer.token]);
      }
      await client.close();
    }
    return {
      config,
      seconds: (performance.now() - started) / 1000,
      proxy: proxy.counts(),
      violations,
      ledger,
      grants,
      samples: sampler.samples(),
      maxHoldersSeen: sampler.maxHolders(),
      lostLocks,
      clientWarnings: warnings,
      // Only the counters a service reports: an optional one it lacks (revokedTotal) is left out.
      serverMetrics: Object.fromEntries(Object.entries(metrics).filter((e): e is [string, number] => typeof e[1] === "number")),
      serverCalls: { ...tap.counts },
      drainMs,
      lockBoundMs: lockBoundMs(config.maxWaitMs),
      callBoundMs,
      stuckProbes,
      lapsedAfterQueueWait,
    };
  } finally {
    for (const fn of cleanups.reverse()) await Promise.resolve(fn()).catch(() => undefined);
    process.off("unhandledRejection", unhandled);
  }
}
