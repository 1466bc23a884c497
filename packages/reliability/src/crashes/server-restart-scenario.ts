import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LockClient, type LostLockReason } from "@leasehold/client";
import { capturedLogger, type CapturedLogger } from "./captured-logger.js";
import { probeAgent, waitForMetrics, readMetrics } from "./http-probe.js";
import { LoadHistory, type LoadOperation } from "./load-history.js";
import { LostLockLog } from "./lost-lock-log.js";
import { runLoadWorker } from "./restart-load-worker.js";
import { SeededRandom } from "../seeded-random.js";
import { ServerIncarnations, type Outage } from "./server-incarnations.js";
import { checkValueOrder, type ValueOrderSummary } from "./value-order-checker.js";
import { Violations } from "../violations.js";
import { settleWithin } from "../settle-within.js";

/** Sizes of the server-restart scenario. */
export interface ServerRestartOptions {
  /** `LockClient.http` clients (even ones retry as by default, odd ones give up after ~150 ms). */
  readonly clients: number;
  /** Concurrent load loops per client. */
  readonly workersPerClient: number;
  /** Descriptors the load locks at random. */
  readonly descriptors: number;
  /** SIGKILL + restart cycles during the load. */
  readonly kills: number;
  /** Load before the first kill and between kills, in ms (each gap jittered by ±25 %). */
  readonly killEveryMs: number;
  /** Load after the last restart, in ms. */
  readonly tailMs: number;
  /** How long the server stays down after each kill, as a range in ms. */
  readonly downMs: readonly [number, number];
  /** The server's `--lease-ms` (leases promise half). */
  readonly leaseMs: number;
  /** Seed of every random choice. */
  readonly seed: number;
  /**
   * Give the server its `--data-dir` (default true). False is the negative control: numbers restart
   * at 1 with every process, and the ordering checks must catch it.
   */
  readonly durable?: boolean | undefined;
}

/** What the scenario measured; `violations` holds every broken check. */
export interface ServerRestartResult {
  /** Options it ran with. */
  readonly options: ServerRestartOptions;
  /** Every broken check. */
  readonly violations: Violations;
  /** Client operations by kind. */
  readonly operations: Record<LoadOperation, number>;
  /** Operations that rejected (all during an outage, all `UNAVAILABLE`, or they are violations). */
  readonly failedOperations: number;
  /** Lock requests answered `timeout`. */
  readonly lockTimeouts: number;
  /** The outages, kill to listening again. */
  readonly outages: readonly Outage[];
  /** `lostLocks` reports, by reason, over all clients. */
  readonly lostByReason: Partial<Record<LostLockReason, number>>;
  /** Grants orphaned by a kill whose holder waited for the loss report. */
  readonly orphansChecked: number;
  /** Slowest loss report of an orphaned grant, ms after the kill. */
  readonly slowestLossReportMs: number;
  /** Tokens of a live server reported lost (allowed: a stalled client loses its lease; reported, not a violation). */
  readonly lostWhileServerLive: number;
  /** Failed unlock calls of `tryUnlock`, by `stats().unlockFailures`, and the warnings logged for them. */
  readonly tryUnlockFailures: number;
  /** Warnings "unlock call failed" in the clients' captured logs. */
  readonly tryUnlockFailureLogs: number;
  /** What the ordering check compared. */
  readonly valueOrder: ValueOrderSummary;
  /** `leasehold_lease_lapses_total` of the last server process at the end. */
  readonly finalLapses: number;
  /** Wall-clock seconds. */
  readonly seconds: number;
}

const UNLOCK_FAILED = "leasehold: unlock call failed; its locks will lapse with their lease";

/** Allow an error only on an operation that overlapped an outage, and only `UNAVAILABLE`. */
function checkFailures(history: LoadHistory, outages: readonly Outage[], violations: Violations): number {
  let failed = 0;
  for (const op of history.operations) {
    if (op.outcome !== "error") continue;
    failed++;
    const overlaps = outages.some((o) => op.sentAt <= o.listeningAt && op.settledAt >= o.killedAt);
    violations.expect(overlaps, "errors-only-during-outages", () => `client ${op.client}: ${op.kind} failed (${op.code ?? "?"}) while the server was up`);
    violations.expect(op.code === "UNAVAILABLE", "errors-only-during-outages", () => `client ${op.client}: ${op.kind} failed with ${op.code ?? "?"}, not UNAVAILABLE`);
  }
  return failed;
}

/** Failed unlocks are each logged once, with a count and never a token. Returns [failures, logged warnings]. */
function checkUnlockLogs(clients: readonly LockClient[], logs: readonly CapturedLogger[], history: LoadHistory, violations: Violations): [number, number] {
  let failures = 0;
  let logged = 0;
  clients.forEach((client, i) => {
    const log = logs[i] as CapturedLogger;
    const warnings = log.lines.filter((l) => l.msg === UNLOCK_FAILED);
    const count = client.stats().unlockFailures;
    failures += count;
    logged += warnings.length;
    violations.expect(warnings.length === count, "tryUnlock-failures-logged", () => `client ${i}: ${count} failed unlock calls but ${warnings.length} warnings`);
    for (const w of warnings) {
      violations.expect(typeof w.tokenCount === "number" && w.tokenCount >= 1, "tryUnlock-failures-logged", () => `client ${i}: a failed-unlock warning without a token count`);
    }
    for (const line of log.raw) {
      for (const token of history.tokens) {
        if (line.includes(token)) violations.add("no-token-in-logs", `client ${i}: a log line carries a lock token`);
      }
    }
  });
  return [failures, logged];
}

/**
 * Server SIGKILL and restart in the middle of load. The CLI server runs as a child process with a
 * data directory; `clients` `LockClient.http` clients each run {@link runLoadWorker}; every
 * `killEveryMs` the server is SIGKILLed, stays down a while, and a new process starts on the same
 * port and data directory. Afterwards the load stops and everything is checked (see the checks
 * named in the violations and the report).
 */
export async function runServerRestartScenario(options: ServerRestartOptions): Promise<ServerRestartResult> {
  const began = performance.now();
  const violations = new Violations();
  const history = new LoadHistory();
  const random = new SeededRandom(options.seed);
  const dataDir = await mkdtemp(join(tmpdir(), "leasehold-crashes-"));
  const servers = await ServerIncarnations.start(options.durable === false ? undefined : dataDir, options.leaseMs);
  const agent = probeAgent();
  const validForMs = options.leaseMs / 2;
  const hangBoundMs = 15_000;
  const logs = Array.from({ length: options.clients }, () => capturedLogger());
  const clients = logs.map((log, i) =>
    LockClient.http({
      baseUrl: servers.url,
      namespace: "crashes",
      logger: log.logger,
      requestTimeoutMs: 5_000,
      // Odd clients give up within ~150 ms, so their calls (and tryUnlock's unlock calls) fail during an outage.
      ...(i % 2 === 1 && { retry: { maxRetries: 2, minTimeoutMs: 50, maxTimeoutMs: 100 } }),
    }),
  );
  const lostLogs = clients.map((c) => new LostLockLog(c));
  let stop = false;
  try {
    const descriptors = Array.from({ length: options.descriptors }, (_, i) => `resource-${i}`);
    const workers = Array.from({ length: options.clients * options.workersPerClient }, (_, w) => {
      const id = w % options.clients;
      return runLoadWorker({
        id,
        client: clients[id] as LockClient,
        lost: lostLogs[id] as LostLockLog,
        random: new SeededRandom(options.seed + 1 + w),
        descriptors,
        servers,
        history,
        violations,
        validForMs,
        lostSlackMs: 1_000,
        hangBoundMs,
        stopped: () => stop,
      }).catch((err: unknown) => violations.add("no-client-crash", `client ${id}: its load loop threw ${String(err)}`));
    });
    for (let k = 0; k < options.kills; k++) {
      await new Promise((r) => setTimeout(r, options.killEveryMs * (0.75 + random.next() / 2)));
      await servers.killAndRestart(random.int(options.downMs[0], options.downMs[1]));
    }
    await new Promise((r) => setTimeout(r, options.tailMs));
    stop = true;

    // Every worker finishes its operation in hand; a hung one is a violation, not a hung test.
    const joined = (await settleWithin(Promise.all(workers), 1_000 + hangBoundMs + 5_000)).settled;
    violations.expect(joined, "no-hang", () => "a load worker did not finish after the load stopped");
    const closed = (await settleWithin(Promise.all(clients.map((c) => c.close())), 15_000)).settled;
    violations.expect(closed, "no-hang", () => "a client's close() did not resolve within 15 s");

    const failedOperations = checkFailures(history, servers.outages, violations);
    for (const line of servers.errors()) violations.add("no-server-errors", `the server logged: ${String(line.msg)}`);
    logs.forEach((log, i) => {
      for (const line of log.lines) {
        if (typeof line.level === "number" && line.level >= 50) violations.add("no-client-crash", `client ${i} logged an error: ${String(line.msg)}`);
      }
    });
    const [tryUnlockFailures, tryUnlockFailureLogs] = checkUnlockLogs(clients, logs, history, violations);
    violations.expect(tryUnlockFailures > 0, "faults-exercised", () => "no tryUnlock call failed: the outages did not exercise failed unlocks");
    violations.expect(history.orphans.length > 0, "faults-exercised", () => "no grant was held across a kill: lost-lock reporting was not exercised");
    const valueOrder = checkValueOrder(
      history.values,
      servers.incarnations.map((i) => i.leaderId),
      servers.outages.map((o) => o.listeningAt),
      violations,
    );
    violations.expect(valueOrder.afterRestart > 0, "faults-exercised", () => "no timestamp or fencing token was obtained after a restart");

    // Every lock is released once the load has stopped: at once by unlock, or within a lease by lapse.
    const released = await waitForMetrics(
      servers.url,
      agent,
      (m) => m.get("leasehold_held_tokens") === 0 && m.get("leasehold_waiting_requests") === 0,
      options.leaseMs + 2_000,
    );
    const final = await readMetrics(servers.url, agent);
    violations.expect(released, "all-released", () => `after the load, ${final.get("leasehold_held_tokens")} tokens still held, ${final.get("leasehold_waiting_requests")} waiting`);

    const lostByReason: Partial<Record<LostLockReason, number>> = {};
    for (const log of lostLogs) {
      for (const [reason, n] of Object.entries(log.byReason)) lostByReason[reason as LostLockReason] = (lostByReason[reason as LostLockReason] ?? 0) + n;
    }
    const reported = history.orphans.flatMap((o) => (o.reportedAfterMs === undefined ? [] : [o.reportedAfterMs]));
    return {
      options,
      violations,
      operations: history.countByKind(),
      failedOperations,
      lockTimeouts: history.operations.filter((o) => o.outcome === "timeout").length,
      outages: servers.outages,
      lostByReason,
      orphansChecked: history.orphans.length,
      slowestLossReportMs: reported.length === 0 ? 0 : Math.max(...reported),
      lostWhileServerLive: history.lostWhileServerLive,
      tryUnlockFailures,
      tryUnlockFailureLogs,
      valueOrder,
      finalLapses: final.get("leasehold_lease_lapses_total") ?? 0,
      seconds: (performance.now() - began) / 1000,
    };
  } finally {
    stop = true; // also when a step above threw: no loop may outlive the scenario
    await settleWithin(Promise.all(clients.map((c) => c.close())), 15_000);
    agent.destroy();
    await servers.stop().catch(() => servers.kill());
    await rm(dataDir, { recursive: true, force: true });
  }
}
