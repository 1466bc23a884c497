/**
 * Issue 12, section 5: cluster faults. Three CLI servers in cluster mode over one PostgreSQL schema,
 * each through its own seeded fault proxy; clients with fenced counters, timestamps and
 * transactions; SIGKILL, SIGSTOP, blackholed PostgreSQL links, pg_terminate_backend and SIGTERM on
 * leaders; then every check over the whole history. Two negative controls switch a safety rule off
 * in the servers (test mode only) and must make the checks fire. Needs `pnpm build` and PostgreSQL
 * (127.0.0.1:5432, or LEASEHOLD_TEST_PG). Quick mode by default, `LEASEHOLD_SOAK=1` for ≥ 200 cycles.
 */
import { afterAll, describe, expect, it } from "vitest";
import { clusterSection, type ClusterControl } from "../../src/cluster/cluster-report.js";
import { runClusterScenario, type ClusterScenarioOptions, type ClusterScenarioResult } from "../../src/cluster/cluster-scenario.js";
import { SOAK, WRITE_REPORT, describeMachine, sized, writeSection } from "../../src/report/index.js";

/** Seed of every random choice; printed in the report and failures. `LEASEHOLD_SEED` replays one. */
const seed = Number(process.env.LEASEHOLD_SEED ?? Date.now() % 2 ** 31);
const startedAt = performance.now();

/** Short leader leases keep a cycle near a few seconds on a loaded 2-core machine. */
const base: ClusterScenarioOptions = {
  seed,
  cycles: sized(30, 200),
  leaderLeaseMs: 700,
  leaseMs: 2_000,
  shards: 3,
  namespaces: 3,
  clientsPerNamespace: 2,
  holdMaxMs: 600,
  deadlineMs: 2_500,
  // A lock sent to a leader that then stops waits its deadline plus the request timeout before it
  // is re-sent: the bound is that timeout plus 2 s of scheduling slack on a loaded 2-core machine.
  requestTimeoutMs: 1_500,
  settleBoundMs: 3_500,
  pauseLeases: 1.5,
};

let main: ClusterScenarioResult | undefined;
const controls: ClusterControl[] = [];

/**
 * Run a control until the check it targets fires, at most `runs` times (each run is short; a fault
 * may miss the window). Another check firing does not end the search: the test asks for this one.
 */
async function control(testBreak: string, check: string, options: Partial<ClusterScenarioOptions>, runs: number): Promise<ClusterControl> {
  const done: ClusterScenarioResult[] = [];
  for (let i = 0; i < runs; i++) {
    const r = await runClusterScenario({ ...base, seed: seed + 1 + i, ...options, testBreak });
    done.push(r);
    if (r.violations.count(check) > 0) break;
  }
  const result = { testBreak, runs: done };
  controls.push(result);
  return result;
}

afterAll(() => {
  if (!WRITE_REPORT || main === undefined || controls.length < (SOAK ? 2 : 1)) return;
  writeSection(
    clusterSection(main, controls, {
      mode: SOAK ? "soak" : "quick",
      date: new Date().toISOString(),
      machine: describeMachine(),
      seconds: (performance.now() - startedAt) / 1000,
    }),
  );
});

describe("cluster faults", () => {
  it(
    "leaders killed, paused, cut off from PostgreSQL, their sessions terminated and stopped: timestamps unique and in real-time order, fencing tokens increasing, no overlapping holds, one leader serving per shard, every call settled",
    async () => {
      main = await runClusterScenario(base);
      expect(main.cycles.length).toBe(base.cycles);
      expect(main.timestampAnswers).toBeGreaterThan(0);
      expect(main.tally.grants).toBeGreaterThan(0);
      expect(main.terms).toBeGreaterThan(main.options.shards);
      expect(main.violations.total, `seed ${seed}\n${main.violations.describe()}`).toBe(0);
    },
    sized(420_000, 3_600_000),
  );

  it(
    "negative control: the serving gate switched off, a paused leader serves on resuming: the one-leader check fires",
    async () => {
      const c = await control("gate", "one leader serving per shard", { cycles: 3, faults: ["sigstop"], pauseLeases: 2 }, 3);
      const last = c.runs.at(-1)!;
      expect(last.violations.count("one leader serving per shard"), `seed ${last.options.seed}`).toBeGreaterThan(0);
    },
    120_000,
  );

  // Soak mode only for now: on an idle machine three short runs did not always catch a grant inside
  // the dead leader's leases (CI, 2026-11-24), so in quick mode it could fail for want of luck, not
  // of a bug. `pnpm test:soak` runs it with more tries; making it deterministic is open (issue 12).
  it.runIf(SOAK)(
    "negative control: the lease-wait of a new leader removed, it grants during the dead leader's leases: the overlap check fires",
    async () => {
      const c = await control("lease-wait", "(a) no conflicting lease guarantees overlap", { cycles: 4, faults: ["sigkill"], holdMaxMs: 1_500, clientsPerNamespace: 3 }, 6);
      const last = c.runs.at(-1)!;
      expect(last.violations.count("(a) no conflicting lease guarantees overlap"), `seed ${last.options.seed}`).toBeGreaterThan(0);
    },
    480_000,
  );
});
