import { LockClient } from "@leasehold/client";
import { pino } from "pino";
import type { CounterResource } from "../../../src/fenced-resource/index.js";
import { HistoryRecorder, type History } from "../../../src/history/index.js";
import { runHold, type HoldContext } from "./run-hold.js";
import type { WorkloadOptions } from "./workload-options.js";
import { emptyWorkloadStats, type WorkloadStats } from "./workload-stats.js";

/** What a run leaves: the recorded history and the holders' own counts. */
export interface WorkloadRun {
  /** Grants, releases, resource operations and final counters. */
  readonly history: History;
  /** The holders' view: pauses, renewals, releases, lost-lock reports, errors. */
  readonly stats: WorkloadStats;
  /** Wall-clock ms from the first lock call to the last client closed. */
  readonly elapsedMs: number;
}

/** A refresher tick that never comes: about 23 days (Node clamps intervals above 2^31 − 1 ms to 1 ms). */
const NEVER_MS = 2_000_000_000;

/** The default descriptors: `counter-0` … `counter-<n-1>`. */
export function descriptorNames(n: number): string[] {
  return Array.from({ length: n }, (_, i) => `counter-${i}`);
}

/**
 * Run the mutual-exclusion workload: `clients` holders, each using a `LockClient.http` (and a
 * second one, never refreshing, for the holds that pause): odd-numbered holders each with their
 * own, `lockBatching` off; even-numbered ones four to a client with `lockBatching` on, so that
 * their locks meet in batches. They loop over {@link runHold} until
 * `durationMs` has passed, then every client is closed. Errors thrown by a hold are recorded in
 * `stats.errors` and the holder carries on, so one failure cannot hide the rest of the run.
 */
export async function runWorkload(options: WorkloadOptions): Promise<WorkloadRun> {
  const recorder = new HistoryRecorder();
  const resources = new Map<string, CounterResource>(descriptorNames(options.descriptors).map((d) => [d, options.resource(d, recorder)]));
  const stats = emptyWorkloadStats();
  const logger = pino({ level: "silent" });
  const clients: LockClient[] = [];
  const open = (extra: { refreshTickMs?: number; lockBatching: boolean }): LockClient => {
    const client = LockClient.http({ baseUrl: options.baseUrl, namespace: options.namespace, logger, ...extra });
    client.lostLocks.subscribe((lost) => (stats.lostLocks[lost.reason] = (stats.lostLocks[lost.reason] ?? 0) + 1));
    clients.push(client);
    return client;
  };
  const started = recorder.now();
  const endAt = started + options.durationMs;
  // Half the holders send their locks in lock batches, half one request per lock: both paths are
  // judged. Batching holders share a client in fours: a lock on an idle client goes as a plain
  // `lock`, so a client of one holder would hardly ever batch; four holders on one client keep
  // `lock-batch` (and `lock-cancel`) on the wire.
  const shared = new Map<number, { client: LockClient; pausingClient: LockClient }>();
  const batchingClients = (group: number) => {
    let pair = shared.get(group);
    if (pair === undefined) {
      pair = { client: open({ lockBatching: true }), pausingClient: open({ lockBatching: true, refreshTickMs: NEVER_MS }) };
      shared.set(group, pair);
    }
    return pair;
  };
  const holders = Array.from({ length: options.clients }, async (_, c) => {
    const lockBatching = c % 2 === 0;
    const { client, pausingClient } = lockBatching
      ? batchingClients(Math.floor(c / 8))
      : { client: open({ lockBatching }), pausingClient: open({ lockBatching, refreshTickMs: NEVER_MS }) };
    const ctx: HoldContext = { options, recorder, resources, stats, client, pausingClient };
    for (let n = 0; recorder.now() < endAt; n++) {
      try {
        await runHold(ctx, `c${c}-h${n}`);
      } catch (err) {
        stats.errors.push(err instanceof Error ? `${err.name}: ${err.message}` : String(err));
      }
    }
  });
  await Promise.all(holders);
  // lostLocks reports `client-closed` for what is still tracked; nothing should be, every hold released.
  await Promise.all(clients.map((c) => c.close()));
  for (const client of clients) {
    stats.refreshCalls += client.stats().refreshCalls;
    stats.unlockFailures += client.stats().unlockFailures;
  }
  const finalCounters = Object.fromEntries([...resources].map(([d, r]) => [d, r.value]));
  return { history: recorder.history(finalCounters), stats, elapsedMs: recorder.now() - started };
}
