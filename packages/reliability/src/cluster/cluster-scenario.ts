import type { ClusterResponse } from "@leasehold/protocol";
import { checkFencingOrder, checkLeaseOverlap, type CheckResult } from "../history/index.js";
import { SeededRandom, deriveSeed } from "../seeded-random.js";
import { Violations } from "../violations.js";
import { boundEvents, checkBoundExtensionsFenced } from "./check-bound-extensions.js";
import { checkServeIntervals, serveIntervals } from "./check-serve-intervals.js";
import { checkTimestampOrder } from "./check-timestamp-order.js";
import { CLUSTER_FAULTS, runFaultCycle, type ClusterFault, type FaultCycle } from "./cluster-faults.js";
import { ClusterMember } from "./cluster-members.js";
import { sleep } from "./control-cluster.js";
import { startClusterWorkload, type ClusterWorkloadTally } from "./cluster-workload.js";
import { NO_GATE_LOSS_CHECK } from "./latency-cycle.js";
import { createRunSchema } from "./pg-run-schema.js";

/** One run of the cluster fault suite. */
export interface ClusterScenarioOptions {
  readonly seed: number;
  readonly cycles: number;
  /**
   * The faults to draw from (uniformly, seeded). Default: all of {@link CLUSTER_FAULTS}. The latency
   * run passes `["latency"]` with a leader lease a renewal fits in at 400 ms a statement.
   */
  readonly faults?: readonly ClusterFault[] | undefined;
  readonly leaderLeaseMs: number;
  readonly leaseMs: number;
  readonly shards: number;
  readonly namespaces: number;
  readonly clientsPerNamespace: number;
  readonly holdMaxMs: number;
  readonly deadlineMs: number;
  /** The clients' `requestTimeoutMs` (see `ClusterWorkloadOptions`). */
  readonly requestTimeoutMs: number;
  readonly settleBoundMs: number;
  /** SIGSTOP and blackhole last this many leader leases (issue 12: 1.5). */
  readonly pauseLeases: number;
  /** `LEASEHOLD_TEST_BREAK` for the servers (negative controls). Default none. */
  readonly testBreak?: string | undefined;
}

/** What a run found. */
export interface ClusterScenarioResult {
  readonly options: ClusterScenarioOptions;
  readonly cycles: readonly FaultCycle[];
  readonly violations: Violations;
  readonly tally: ClusterWorkloadTally;
  readonly timestampAnswers: number;
  readonly terms: number;
  /** Bound extensions checked against newer acquisitions of their shard (bound extensions fenced by epoch). */
  readonly boundExtensions: number;
  readonly historyChecks: readonly CheckResult[];
  readonly elapsedMs: number;
  /** Server starts tried again after "could not start" (see {@link ClusterMember.restart}). */
  readonly startRetries: number;
}

async function waitForLeaders(members: readonly ClusterMember[], timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    try {
      const map = (await (await fetch(`${members[0]!.url}/v1/cluster`)).json()) as ClusterResponse;
      if (map.leaders.every((l) => l.leaderUrl !== null)) return;
    } catch {
      // not up yet
    }
    if (performance.now() > deadline) throw new Error("the cluster did not elect a leader for every shard in time");
    await sleep(50);
  }
}

/**
 * Three CLI servers over one PostgreSQL schema (each through its own fault proxy), clients doing
 * locks with fenced counters, timestamps and transactions, and `cycles` faults on a leader; then
 * every check over the whole history. Servers, proxies and the schema are gone when it returns.
 */
export async function runClusterScenario(options: ClusterScenarioOptions): Promise<ClusterScenarioResult> {
  const started = performance.now();
  const violations = new Violations();
  const schema = await createRunSchema();
  const members: ClusterMember[] = [];
  const env = options.testBreak === undefined ? undefined : { LEASEHOLD_TEST_BREAK: options.testBreak };
  const settings = { leaderLeaseMs: options.leaderLeaseMs, shards: options.shards, leaseMs: options.leaseMs, env };
  try {
    members.push(await ClusterMember.start(0, options.seed, schema, settings));
    members.push(...(await Promise.all([1, 2].map((i) => ClusterMember.start(i, options.seed, schema, settings)))));
    await waitForLeaders(members, 30_000);
    const namespaces = Array.from({ length: options.namespaces }, (_, i) => `ns-${i}`);
    const workload = startClusterWorkload(
      {
        baseUrls: members.map((m) => m.url),
        namespaces,
        clientsPerNamespace: options.clientsPerNamespace,
        descriptors: 2,
        deadlineMs: options.deadlineMs,
        requestTimeoutMs: options.requestTimeoutMs,
        settleBoundMs: options.settleBoundMs,
        holdMaxMs: options.holdMaxMs,
        seed: deriveSeed(options.seed, 1),
      },
      violations,
    );
    const rng = new SeededRandom(deriveSeed(options.seed, 2));
    const faults = options.faults ?? CLUSTER_FAULTS;
    const cycles: FaultCycle[] = [];
    const ctx = { members, schema, namespaces, leaderLeaseMs: options.leaderLeaseMs, pauseLeases: options.pauseLeases, rng };
    await sleep(options.leaderLeaseMs);
    // Every fault once first, in a seeded order, then uniform draws: a short run still covers each.
    const firstRound = [...faults];
    for (let i = firstRound.length - 1; i > 0; i--) {
      const j = rng.int(0, i);
      [firstRound[i], firstRound[j]] = [firstRound[j]!, firstRound[i]!];
    }
    for (let i = 0; i < options.cycles; i++) {
      let fault = i < firstRound.length ? firstRound[i]! : rng.pick(faults);
      // At least one duplicate-server-id cycle per run (issue 20), whatever the draw: the last one.
      if (i === options.cycles - 1 && faults.includes("duplicate-id") && !cycles.some((c) => c.fault === "duplicate-id")) fault = "duplicate-id";
      const cycle = await runFaultCycle(ctx, fault);
      for (const problem of cycle.duplicate?.problems ?? []) violations.add("duplicate server id", problem);
      for (const problem of cycle.latency?.problems ?? []) violations.add(NO_GATE_LOSS_CHECK, problem);
      cycles.push(cycle);
      await sleep(rng.int(options.leaderLeaseMs / 4, options.leaderLeaseMs));
    }
    await workload.stop();
    // One more renewal round logs every live term's serve interval up to its last operation.
    await sleep(options.leaderLeaseMs / 2);
    const history = workload.recorder.history(Object.fromEntries([...workload.counters].map(([k, c]) => [k, c.value])));
    const historyChecks = [checkLeaseOverlap(history), checkFencingOrder(history)];
    for (const check of historyChecks) for (let n = 0; n < check.violations; n++) violations.add(check.rule, check.examples[n] ?? "(more of the same)");
    const timestampAnswers = checkTimestampOrder(workload.timestamps, violations);
    // The duplicates' serve intervals count too: one leader serving per shard, whoever it is.
    const duplicates = cycles.flatMap((c) => (c.duplicate === undefined ? [] : [c.duplicate.lines]));
    const allLines = [...members.map((m) => m.lines()), ...duplicates];
    const terms = checkServeIntervals(serveIntervals(allLines), violations);
    const boundExtensions = checkBoundExtensionsFenced(boundEvents(allLines), violations);
    return { options, cycles, violations, tally: workload.tally, timestampAnswers, terms, boundExtensions, historyChecks, elapsedMs: performance.now() - started, startRetries: members.reduce((s, m) => s + m.startRetries, 0) };
  } finally {
    await Promise.all(members.map((m) => m.close()));
    await schema.drop();
  }
}
