import { shardOf } from "@leasehold/protocol";
import { checkFencingOrder, checkLeaseOverlap, type CheckResult } from "../history/index.js";
import { SeededRandom, deriveSeed } from "../seeded-random.js";
import { Violations } from "../violations.js";
import { checkNoLockLost, type NoLockLostFigures } from "./check-no-lock-lost.js";
import { checkServeIntervals, serveIntervals } from "./check-serve-intervals.js";
import { checkTimestampOrder } from "./check-timestamp-order.js";
import { startFixedIdMembers, type ClusterMember } from "./cluster-members.js";
import { startClusterWorkload, type ClusterWorkloadTally } from "./cluster-workload.js";
import { sleep } from "./control-cluster.js";
import { FailureLog, type FailurePhase } from "./failure-log.js";
import { startLockKeepers, type KeptHold } from "./lock-keepers.js";
import { createRunSchema } from "./pg-run-schema.js";
import { runStandbyCycle, type StandbyCycle, type StandbyCycleKind } from "./standby-cycles.js";
import { waitWhole } from "./standby-rows.js";

/** One run of the standby faults. */
export interface StandbyScenarioOptions {
  readonly seed: number;
  /** The cycles, run in this order on one cluster (each waits until the cluster is whole again). */
  readonly cycles: readonly StandbyCycleKind[];
  /** `--leader-lease-ms`: short, so a takeover takes about a second. */
  readonly leaderLeaseMs: number;
  /** `--lease-ms`: the keepers' guarantee is half of it. */
  readonly leaseMs: number;
  /** `--shards`; the workload uses one namespace on each, so every shard's standby sees grants (a shard nobody uses never finds its standby late). */
  readonly shards: number;
  /** `LEASEHOLD_TEST_BREAK` for every server (a negative control). Default none. */
  readonly testBreak?: string | undefined;
}

/** What a run found. */
export interface StandbyScenarioResult {
  readonly options: StandbyScenarioOptions;
  readonly cycles: readonly StandbyCycle[];
  readonly violations: Violations;
  readonly tally: ClusterWorkloadTally;
  readonly keeperCalls: { readonly locks: number; readonly refreshes: number };
  readonly holds: readonly KeptHold[];
  readonly noLockLost: NoLockLostFigures;
  /** The run cut into phases by how many members were failed (0, 1 or 2): the check applies where it is at most 1. */
  readonly phases: readonly FailurePhase[];
  readonly timestampAnswers: number;
  readonly terms: number;
  readonly historyChecks: readonly CheckResult[];
  readonly elapsedMs: number;
}

/** `ns-<i>` names, the first on each of `shards` shards. */
function namespacesCovering(shards: number): string[] {
  const byShard = new Map<number, string>();
  for (let i = 0; byShard.size < shards; i++) if (!byShard.has(shardOf(`ns-${i}`, shards))) byShard.set(shardOf(`ns-${i}`, shards), `ns-${i}`);
  return [...byShard.values()];
}

/** Lines about a shard changing hands that a loss's detail quotes (with their reason, outcome or error). */
const HAND_LINES = /^(shard lost|shard acquired|shard handed over|standby promoted|standby recorded not in sync|getting an in-sync standby|hand-over )/;

/**
 * For a violation's detail: the lines every server logged about a key's shard changing hands
 * (lost, acquired, handed over, promoted, a hand-over abandoned or failed, a standby recorded not
 * in sync) between `from` and `to` (the ledger's clock), with their reasons.
 */
export function shardEvents(members: readonly ClusterMember[], shards: number): (key: string, from: number, to: number) => string {
  return (key, from, to) => {
    const shard = shardOf(key.split("/")[0]!, shards);
    const events = members.flatMap((m) =>
      m.lines().flatMap((l) => {
        const at = (l.time as number) - performance.timeOrigin;
        if (typeof l.msg !== "string" || !HAND_LINES.test(l.msg) || l.shard !== shard || at < from || at > to) return [];
        const why = l.reason ?? l.outcome ?? (l.err as { message?: unknown } | undefined)?.message ?? "";
        return [`member ${m.index} ${l.msg} epoch ${String(l.epoch)} at ${at.toFixed(0)} ms (${String(why)})`];
      }),
    );
    return events.join("; ");
  };
}

/** How long the cluster may take to be whole again (ready members, every shard in sync) on a loaded 2-core machine. */
const WHOLE_TIMEOUT_MS = 30_000;

/**
 * Three CLI servers with `--replicas 1` (the default) over one PostgreSQL schema, restarted in place
 * with their own `--server-id`; the cluster workload (short holds, timestamps, transactions) and
 * the keepers (holds of seconds, refreshed explicitly) run while `cycles` go by; then every check
 * over the whole history: no overlapping holds, fencing order, timestamps, one leader serving per
 * shard, and no lock lost to a single failure. Servers, proxies and the schema are gone when it returns.
 */
export async function runStandbyScenario(options: StandbyScenarioOptions): Promise<StandbyScenarioResult> {
  const started = performance.now();
  const violations = new Violations();
  const schema = await createRunSchema();
  const members: ClusterMember[] = [];
  // Set once the loads run: a cycle that throws must not leave them calling dead servers.
  let stopLoads: (() => Promise<unknown>) | undefined;
  try {
    members.push(...(await startFixedIdMembers(3, options.seed, schema, options, "sb-s", options.testBreak)));
    await waitWhole(schema, members.map((m) => m.serverId!), options.leaderLeaseMs, WHOLE_TIMEOUT_MS);
    const namespaces = namespacesCovering(options.shards);
    const baseUrls = members.map((m) => m.url);
    const deadlineMs = 2_500;
    const requestTimeoutMs = 1_500;
    const workload = startClusterWorkload(
      { baseUrls, namespaces, clientsPerNamespace: 2, descriptors: 2, deadlineMs, requestTimeoutMs, settleBoundMs: 3_500, holdMaxMs: 400, seed: deriveSeed(options.seed, 1) },
      violations,
    );
    const keepers = startLockKeepers(
      { baseUrls, namespaces, keepersPerNamespace: 2, holdMinMs: 1_500, holdMaxMs: 4_000, refreshEveryMs: 200, deadlineMs, requestTimeoutMs, seed: deriveSeed(options.seed, 3) },
      workload.recorder,
      workload.counters,
    );
    stopLoads = () => Promise.all([workload.stop(), keepers.stop()]);
    const failures = new FailureLog(() => workload.recorder.now());
    const runFrom = workload.recorder.now();
    const ctx = { members, schema, failures, leaderLeaseMs: options.leaderLeaseMs, rng: new SeededRandom(deriveSeed(options.seed, 2)), wholeTimeoutMs: WHOLE_TIMEOUT_MS };
    // Keepers hold before the first fault.
    await sleep(options.leaderLeaseMs);
    const cycles: StandbyCycle[] = [];
    for (const kind of options.cycles) {
      cycles.push(await runStandbyCycle(ctx, kind));
      await sleep(options.leaderLeaseMs / 2);
    }
    await stopLoads();
    stopLoads = undefined;
    const runTo = workload.recorder.now();
    // One more renewal round logs every live term's serve interval up to its last operation.
    await sleep(options.leaderLeaseMs / 2);
    const history = workload.recorder.history(Object.fromEntries([...workload.counters].map(([k, c]) => [k, c.value])));
    const historyChecks = [checkLeaseOverlap(history), checkFencingOrder(history)];
    for (const check of historyChecks) for (let n = 0; n < check.violations; n++) violations.add(check.rule, check.examples[n] ?? "(more of the same)");
    const timestampAnswers = checkTimestampOrder(workload.timestamps, violations);
    const terms = checkServeIntervals(serveIntervals(members.map((m) => m.lines())), violations);
    const noLockLost = checkNoLockLost(keepers.holds, failures, violations, shardEvents(members, options.shards));
    return {
      options,
      cycles,
      violations,
      tally: workload.tally,
      keeperCalls: keepers.calls,
      holds: keepers.holds,
      noLockLost,
      phases: failures.phases(runFrom, runTo),
      timestampAnswers,
      terms,
      historyChecks,
      elapsedMs: performance.now() - started,
    };
  } finally {
    const stopped = stopLoads?.();
    await Promise.all(members.map((m) => m.close()));
    await stopped;
    await schema.drop();
  }
}
