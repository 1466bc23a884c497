import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FencedCounter, UnfencedCounter, type CounterResource, type OperationSink } from "../../src/fenced-resource/index.js";
import { checkFencingOrder, checkHistory, checkLeaseOverlap, historyFigures } from "../../src/history/index.js";
import { describeMachine, SOAK, sized, WRITE_REPORT, writeSection } from "../../src/report/index.js";
import { startLeaseServer, type CliServer } from "./support/cli-server.js";
import { reverseTokens, stretchGuarantees } from "./support/history-mutations.js";
import { runWorkload } from "./support/run-workload.js";
import { sectionMarkdown, type CheckedRun } from "./support/section-markdown.js";
import { counterDelta, readServerCounters } from "./support/server-metrics.js";
import type { WorkloadOptions } from "./support/workload-options.js";

// Issue 7, section 1: 32 HTTP clients take exclusive and shared locks on 8 descriptors with a
// 500 ms lease, some pausing past it, against fenced counters; the history checker must find
// nothing. The same workload against unfenced counters must lose increments.

const LEASE_MS = 500;
const MAIN_MS = sized(15_000, 240_000);
const CONTROL_MS = sized(6_000, 30_000);
/** Longest a run may take past its duration: a last wait, a last pause, closing the clients. */
const SLACK_MS = 45_000;

let server: CliServer;
let main: CheckedRun | undefined;
const started = performance.now();

function options(namespace: string, durationMs: number, resource: (d: string, sink: OperationSink) => CounterResource): WorkloadOptions {
  return {
    baseUrl: server.url,
    namespace,
    clients: 32,
    descriptors: 8,
    durationMs,
    exclusiveShare: 0.5,
    pauseEvery: 50,
    pauseMs: [2 * LEASE_MS, 3 * LEASE_MS],
    acquireTimeoutMs: 5_000,
    resource,
  };
}

async function checkedRun(o: WorkloadOptions): Promise<CheckedRun> {
  const before = await readServerCounters(server.url);
  const run = await runWorkload(o);
  return {
    options: o,
    run,
    report: checkHistory(run.history),
    figures: historyFigures(run.history),
    serverLapses: lapses(o.namespace),
    server: counterDelta(before, await readServerCounters(server.url)),
    sensitivity: {
      stretchedMs: 2 * LEASE_MS,
      overlapsWhenStretched: checkLeaseOverlap(stretchGuarantees(run.history, 2 * LEASE_MS)).violations,
      misorderedWhenReversed: checkFencingOrder(reverseTokens(run.history)).violations,
    },
  };
}

/** Leases the server let lapse in `namespace`, from its log. */
function lapses(namespace: string): number {
  return server.lines.filter((l) => l.msg === "lease lapsed: released a token nobody refreshed in time" && l.namespace === namespace).length;
}

describe.sequential("1. mutual exclusion with fencing", () => {
  beforeAll(async () => {
    server = await startLeaseServer(LEASE_MS);
  });

  afterAll(async () => {
    expect(await server.stop()).toBe(0);
  });

  it(`fenced counters: no violation of (a)-(d) over ${MAIN_MS / 1000} s of 32 holders with pauses`, async () => {
    main = await checkedRun(options("me-fenced", MAIN_MS, (d, sink) => new FencedCounter(d, sink)));
    const { report, figures, run } = main;
    expect(run.stats.errors).toEqual([]);
    expect(run.stats.unlockFailures).toBe(0);
    for (const r of report.all) expect({ rule: r.rule, violations: r.violations, examples: r.examples }).toEqual({ rule: r.rule, violations: 0, examples: [] });
    expect(report.violations).toBe(0);
    // The run must have exercised what the checks are about, or passing them would prove nothing.
    expect(figures.exclusiveGrants).toBeGreaterThan(sized(300, 5_000));
    expect(figures.sharedGrants).toBeGreaterThan(sized(300, 5_000));
    expect(run.stats.pauses.exclusive).toBeGreaterThan(sized(3, 50));
    expect(run.stats.pauses.shared).toBeGreaterThan(sized(3, 50));
    expect(run.stats.afterPause.refused).toBeGreaterThan(0);
    expect(figures.acknowledgedIncrements).toBeGreaterThan(sized(300, 5_000));
    // Every paused token went unrefreshed for longer than the lease: the server must have let each lapse.
    expect(run.stats.validForMs).toEqual([LEASE_MS / 2]);
    expect(main.serverLapses).toBeGreaterThanOrEqual(run.stats.pauses.exclusive + run.stats.pauses.shared);
    // The server's own counters agree: it granted at least what holders received (a grant whose
    // answer never arrived is released by the server), and both ways of sending locks were used.
    expect(main.server.grants).toBeGreaterThanOrEqual(figures.grants);
    expect(main.server.lapses).toBe(main.serverLapses);
    expect(main.server.requests.lock).toBeGreaterThan(0);
    expect(main.server.requests["lock-batch"]).toBeGreaterThan(0);
    // Rules (a) and (b) can fail on this very history: stretched guarantees overlap, mirrored tokens misorder.
    expect(main.sensitivity.overlapsWhenStretched).toBeGreaterThan(0);
    expect(main.sensitivity.misorderedWhenReversed).toBeGreaterThan(0);
  }, MAIN_MS + SLACK_MS);

  it(`negative control: unfenced counters lose increments under the same workload`, async () => {
    const control = await checkedRun(options("me-unfenced", CONTROL_MS, (d, sink) => new UnfencedCounter(d, sink)));
    if (WRITE_REPORT && main !== undefined) {
      const both = [main, control];
      writeSection({
        id: "1-mutual-exclusion",
        order: 1,
        title: "1. Mutual exclusion with fencing",
        source: "packages/reliability/test/mutual-exclusion/mutual-exclusion.test.ts",
        mode: SOAK ? "soak" : "quick",
        date: new Date().toISOString(),
        machine: describeMachine(),
        seconds: (performance.now() - started) / 1000,
        operations: both.reduce((sum, r) => sum + r.figures.grants + r.figures.releases + r.figures.operations, 0),
        faults: both.reduce((sum, r) => sum + r.run.stats.pauses.exclusive + r.run.stats.pauses.shared, 0),
        badInputs: 0,
        violations: main.report.violations,
        markdown: sectionMarkdown(main, control),
      });
    }
    expect(control.run.stats.errors).toEqual([]);
    expect(control.run.stats.pauses.exclusive).toBeGreaterThan(0);
    expect(control.figures.lostIncrements).toBeGreaterThan(0);
    expect(control.report.noLostWrites.violations).toBeGreaterThan(0);
    expect(control.report.staleRefused.violations).toBeGreaterThan(0);
    // The server's side of the control is as clean as in the fenced run.
    expect(control.report.leaseOverlap.violations + control.report.fencingOrder.violations + control.report.wellFormed.violations).toBe(0);
  }, CONTROL_MS + SLACK_MS);
});
