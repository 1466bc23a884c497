import { describe, expect, it } from "vitest";
import { runStandbyScenario } from "../../src/cluster/standby-scenario.js";
import { STANDBY_CYCLES } from "../../src/cluster/standby-cycles.js";

const seed = Number(process.env.LEASEHOLD_SEED ?? Date.now() % 2 ** 31);

describe("standby faults", () => {
  it("main", async () => {
    const r = await runStandbyScenario({ seed, cycles: (process.env.SB_CYCLES?.split(",") as never) ?? STANDBY_CYCLES, leaderLeaseMs: 1_000, leaseMs: 3_000, shards: 3, testBreak: process.env.SB_BREAK });
    console.log(JSON.stringify({ cycles: r.cycles, noLockLost: r.noLockLost, phases: r.phases, tally: r.tally, keeperCalls: r.keeperCalls, elapsed: r.elapsedMs, terms: r.terms, ts: r.timestampAnswers }, null, 1));
    console.log(r.violations.describe());
    expect(r.violations.total).toBe(0);
  }, 120_000);
});
