/**
 * Issue 12, section 5: cluster faults. Three CLI servers in cluster mode over one PostgreSQL schema,
 * each through its own seeded fault proxy; clients with fenced counters, timestamps and
 * transactions; SIGKILL, SIGSTOP, blackholed PostgreSQL links, pg_terminate_backend, SIGTERM and a
 * second process with the same --server-id (issue 20) on leaders; then every check over the whole history. Three negative controls (the lease-wait, the
 * epoch fence, the serving gate) each run a scripted scenario twice, with the rule intact (its
 * check must stay silent) and switched off in the servers (test mode only; the check must fire);
 * they run in soak mode, the simulator's regressions covering all three in the test command (RUN_CONTROLS).
 * A second run (issue 20, soak mode only) on a cluster with the default 3,000 ms leader lease puts
 * 400 ms round trips on every server's PostgreSQL link while a leader is stopped and new namespaces
 * are touched: no shard may be lost to the serving gate. In the test command
 * `packages/server/test/cluster/cluster-slow-database.test.ts` checks that (a stricter copy: 64
 * shards, more touches), and the simulator's slow-database faults run with every check.
 * Needs `pnpm build` and PostgreSQL
 * (127.0.0.1:5432, or LEASEHOLD_TEST_PG). Quick mode by default, `LEASEHOLD_SOAK=1` for ≥ 200 cycles.
 */
import { afterAll, describe, expect, it } from "vitest";
import { CONTROL_NAMES, runControl, type ControlHalf, type ControlName, type ControlResult } from "../../src/cluster/cluster-controls.js";
import { clusterSection } from "../../src/cluster/cluster-report.js";
import { CLUSTER_FAULTS } from "../../src/cluster/cluster-faults.js";
import { runClusterScenario, type ClusterScenarioOptions, type ClusterScenarioResult } from "../../src/cluster/cluster-scenario.js";
import { SOAK, WRITE_REPORT, describeMachine, sized, writeSection } from "../../src/report/index.js";

/** Seed of every random choice; printed in the report and failures. `LEASEHOLD_SEED` replays one. */
const seed = Number(process.env.LEASEHOLD_SEED ?? Date.now() % 2 ** 31);
const startedAt = performance.now();

/**
 * Short leader leases keep a cycle near a few seconds on a loaded 2-core machine. 6 quick cycles,
 * each fault once in a seeded order (the scenario runs every fault once before it draws): this run
 * is the wiring's test over real processes, proxies and PostgreSQL, while the interleavings of
 * these faults are explored by `pnpm sim` (1,000 seeds in the test command); the kills, pauses and
 * stops of leaders with standbys have their own cycles in cluster-standby-faults.test.ts (soak mode
 * only since session 23: the simulator runs those faults with every check), and the soak runs 200.
 */
const base: ClusterScenarioOptions = {
  seed,
  cycles: sized(CLUSTER_FAULTS.length, 200),
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

/**
 * Issue 20's 400 ms latency cycles, on a cluster of their own: the default 3,000 ms leader lease (a
 * renewal must fit its statement timeout at 400 ms a statement; 700 ms gives 250 ms), 32 shards so
 * a SIGTERMed leader hands over about ten at once. Calls get longer deadlines: a lock or timestamp
 * caught in a hand-over at 400 ms a statement legitimately takes seconds.
 */
const latencyRun: ClusterScenarioOptions = {
  ...base,
  cycles: sized(1, 10),
  faults: ["latency"],
  leaderLeaseMs: 3_000,
  shards: 32,
  deadlineMs: 5_000,
  requestTimeoutMs: 4_000,
  settleBoundMs: 6_000,
};

let main: ClusterScenarioResult | undefined;
let latency: ClusterScenarioResult | undefined;
const controls: ControlResult[] = [];
/**
 * The controls run over CLI processes in soak mode only. The simulator finds all three breaks within
 * its first seeds (`packages/sim/test/sim-regressions.test.ts`: lease-wait, gate, epoch-fence), in a
 * second instead of a quarter of a minute of real time each; the wiring of a removed rule in real
 * servers (LEASEHOLD_TEST_BREAK read at `--log-level debug`) stays proven in the test command by
 * the control of `packages/server/test/cluster/replication/cluster-hand-over-pass.test.ts`, whose
 * rules the simulator does not reach.
 */
const RUN_CONTROLS: readonly ControlName[] = SOAK ? CONTROL_NAMES : [];

afterAll(() => {
  if (!WRITE_REPORT || main === undefined || (SOAK && latency === undefined) || controls.length < RUN_CONTROLS.length) return;
  writeSection(
    clusterSection(main, latency, controls, {
      mode: SOAK ? "soak" : "quick",
      date: new Date().toISOString(),
      machine: describeMachine(),
      seconds: (performance.now() - startedAt) / 1000,
    }),
  );
});

/** What each control's scenario must have shown for its run to mean anything (see control-*.ts). */
function expectMeaningful(c: ControlResult, half: ControlHalf): void {
  const where = `${c.name}, rule ${half.ruleRemoved ? "removed" : "intact"}`;
  if (c.name === "lease-wait") {
    // A's promise reached past the takeover, so a grant at takeover would overlap it.
    expect(half.facts.promiseBeyondTakeoverMs, where).toBeGreaterThan(0);
    // Intact: B waited out every lease the dead leader could have given; removed: B got d inside A's promise.
    if (half.ruleRemoved) expect(half.facts.bGrantAfterPromiseMs, where).toBeLessThan(0);
    else expect(half.facts.bGrantAfterPromiseMs, where).toBeGreaterThan(0);
  } else if (c.name === "epoch-fence") {
    expect(half.facts.extensionsByLeaderTerm, where).toBeGreaterThan(0);
  } else {
    // Intact: the resumed leader's old term served nothing after it resumed (by its own serve-time
    // record: an answer it gave before the pause may reach the client after the resume); removed:
    // it served after resuming, and the client got answers from it below the new leader's.
    if (half.ruleRemoved) {
      expect(half.facts.servedAfterResumeMs, where).toBeGreaterThan(0);
      expect(half.facts.staleAnswersAfterResume, where).toBeGreaterThan(0);
    } else expect(half.facts.servedAfterResumeMs, where).toBeLessThan(0);
  }
}

describe("cluster faults", () => {
  it(
    "leaders killed, paused, cut off from PostgreSQL, their sessions terminated, stopped and duplicated (same --server-id): timestamps unique and in real-time order, fencing tokens increasing, no overlapping holds, one leader serving per shard, every call settled",
    async () => {
      main = await runClusterScenario(base);
      expect(main.cycles.length).toBe(base.cycles);
      expect(main.timestampAnswers).toBeGreaterThan(0);
      expect(main.tally.grants).toBeGreaterThan(0);
      expect(main.terms).toBeGreaterThan(main.options.shards);
      // Every fault ran, the duplicate server id of issue 20 among them (its checks feed the violations below).
      expect(new Set(main.cycles.map((c) => c.fault))).toEqual(new Set(CLUSTER_FAULTS));
      expect(main.violations.total, `seed ${seed}\n${main.violations.describe()}`).toBe(0);
    },
    sized(420_000, 3_600_000),
  );

  // Soak mode only: cluster-slow-database.test.ts is the test command's copy (see the top of the file).
  it.runIf(SOAK)(
    "400 ms round trips on every server's PostgreSQL link while a leader is stopped (SIGTERM) and new namespaces are touched (issue 20): no shard lost to the serving gate, and every check of the main run holds",
    async () => {
      latency = await runClusterScenario({ ...latencyRun, seed: seed + 1 });
      expect(latency.cycles.length).toBe(latencyRun.cycles);
      expect(latency.cycles.every((c) => c.fault === "latency" && c.latency !== undefined)).toBe(true);
      // The cycle meant something: the victim led shards, others took them over at 400 ms a statement.
      for (const c of latency.cycles) expect(c.latency!.victimShards, `cycle on member ${c.victim}`).toBeGreaterThan(0);
      for (const c of latency.cycles) expect(c.latency!.acquisitions, `cycle on member ${c.victim}`).toBeGreaterThan(0);
      expect(latency.timestampAnswers).toBeGreaterThan(0);
      expect(latency.tally.grants).toBeGreaterThan(0);
      expect(latency.violations.total, `seed ${seed + 1}\n${latency.violations.describe()}`).toBe(0);
    },
    sized(180_000, 1_800_000),
  );

  // Negative controls: scripted A/B scenarios (src/cluster/control-*.ts), no random faults. With
  // the rule intact the targeted check must stay at 0, with it removed it must fire. Only the
  // targeted check is asserted: the other checks run alongside are reported, and some of them fire
  // only with a removed rule as a side effect (the gate control's stale timestamps), which is not
  // what the control is about.
  const titles: Record<ControlName, string> = {
    "lease-wait": "negative control, lease-wait: a new leader grants a dead leader's lock only after every lease it could have given; without the wait it grants inside one and the overlap check fires",
    "epoch-fence": "negative control, epoch fence (gate off in both halves): a resumed deposed leader's bound extension matches nothing; without the epoch condition it commits after the takeover and the fence check fires",
    gate: "negative control, serving gate: a paused leader serves nothing on resuming after a takeover; without the gate it does and the one-leader check fires",
  };
  for (const name of RUN_CONTROLS) {
    const i = CONTROL_NAMES.indexOf(name);
    it(
      titles[name],
      async () => {
        const c = await runControl(name, seed + 10 * (i + 1));
        controls.push(c);
        expect(c.intact.violations.count(c.check), `${name}, rule intact:\n${c.intact.violations.describe()}`).toBe(0);
        expect(c.removed.violations.count(c.check), `${name}, rule removed: the targeted check did not fire\n${c.removed.violations.describe()}`).toBeGreaterThan(0);
        expectMeaningful(c, c.intact);
        expectMeaningful(c, c.removed);
      },
      120_000,
    );
  }
});
