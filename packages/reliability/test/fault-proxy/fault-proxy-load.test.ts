import { describe, expect, it } from "vitest";
import { runAbandonmentControl } from "../../src/fault-proxy/abandonment-control.js";
import { breakAbandonment } from "../../src/fault-proxy/break-abandonment.js";
import { faultProxySection, type NegativeControl } from "../../src/fault-proxy/fault-proxy-report.js";
import { runFaultProxyScenario, type FaultProxyScenarioConfig } from "../../src/fault-proxy/fault-proxy-scenario.js";
import { runSeed } from "../../src/seeded-random.js";
import { SOAK, WRITE_REPORT, sized, writeSection } from "../../src/report/index.js";

const SEED_VARIABLE = "LEASEHOLD_PROXY_SEED";

const rates = sized(
  { delay: 0.06, drop: 0.006, truncate: 0.015, reset: 0.02 },
  { delay: 0.06, drop: 0.008, truncate: 0.02, reset: 0.025 },
);

const config: FaultProxyScenarioConfig = {
  seed: runSeed(SEED_VARIABLE),
  loadMs: sized(20_000, 240_000),
  leaseMs: 1_500,
  clients: 4,
  loopsPerClient: 3,
  rawLoops: 4,
  descriptors: 4,
  maxWaitMs: 2_000,
  requestTimeoutMs: 1_500,
  toServer: rates,
  toClient: rates,
  delayMs: { min: 5, max: 150 },
  lingerMs: { min: 0, max: 2_000 },
  sampleEveryMs: 50,
};

const CONTROL_ROUNDS = 5;
let control: NegativeControl | undefined;

describe("2b. Faults: TCP fault proxy between clients and server", () => {
  // Printed first, so a failing run can be replayed with LEASEHOLD_PROXY_SEED=<seed>.
  console.log(`fault proxy: seed ${config.seed} (replay with ${SEED_VARIABLE}=${config.seed}), ${SOAK ? "soak" : "quick"} mode`);

  it("control: an abandoned wait is never granted to nobody, and a server that leaves it queued is caught", async () => {
    const real = await runAbandonmentControl({ rounds: CONTROL_ROUNDS });
    const broken = await runAbandonmentControl({ rounds: CONTROL_ROUNDS, breakServer: breakAbandonment });
    control = {
      rounds: CONTROL_ROUNDS,
      realAbandoned: real.abandoned,
      realGhostGrants: real.ghostGrants,
      realViolations: real.violations.total,
      brokenAbandoned: broken.abandoned,
      brokenGhostGrants: broken.ghostGrants,
    };
    expect(real.abandoned).toBe(CONTROL_ROUNDS);
    expect(real.violations.total, real.violations.describe()).toBe(0);
    expect(broken.abandoned).toBe(CONTROL_ROUNDS);
    expect(broken.ghostGrants).toBe(CONTROL_ROUNDS);
  }, 60_000);

  it(
    "a requestId never acquires twice, abandoned waits leave no ghost holder, every lock is released or lapses, clients never hang",
    async () => {
      const result = await runFaultProxyScenario(config);
      const section = faultProxySection(result, SOAK ? "soak" : "quick", control);
      console.log(section.markdown);
      if (WRITE_REPORT) writeSection(section);

      // The run must really have exercised what it claims to check.
      expect(result.proxy.faults.toServer.reset + result.proxy.faults.toClient.reset).toBeGreaterThan(0);
      expect(result.proxy.faults.toServer.truncate + result.proxy.faults.toClient.truncate).toBeGreaterThan(0);
      expect(result.proxy.faults.toServer.drop + result.proxy.faults.toClient.drop).toBeGreaterThan(0);
      expect(result.grants.retriesWhileHeld).toBeGreaterThan(0);
      expect(result.grants.abandoned).toBeGreaterThan(0);
      expect(result.samples).toBeGreaterThan(10);
      expect(result.violations.total, `seed ${config.seed}\n${result.violations.describe()}`).toBe(0);
    },
    sized(240_000, 900_000),
  );
});
