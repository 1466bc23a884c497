import { describe, expect, it } from "vitest";
import { runSeed } from "../src/sim-run.js";

/**
 * The test command's fixed budget of the deterministic simulation (issue 31): seeds 1–1,000 with
 * every rule in place, each a whole run (three servers, five clients and a lock-watch follower, a fault plan over 42 simulated
 * seconds), must keep every promise. About a minute on one idle core of the 2-core CI machine.
 */
const SEEDS = 1_000;

describe(`pnpm sim's budget in the test command: seeds 1–${SEEDS}`, () => {
  it("every seed keeps every promise (every invariant of sim-history.ts: exclusion, permits, fencing and timestamp order, durability, wait-for-locks, immutable timestamp, leader and log ids, lock watches, queue order, liveness)", async () => {
    const started = performance.now();
    const found: string[] = [];
    for (let seed = 1; seed <= SEEDS; seed++) {
      for (const v of (await runSeed(seed, new Set())).violations) found.push(`seed ${seed}: ${v.invariant}: ${v.detail} (replay: pnpm sim --seed ${seed} --seeds 1 --trace 200)`);
    }
    const seconds = (performance.now() - started) / 1000;
    console.log(`sim budget: ${SEEDS} seeds, ${found.length} violations, ${seconds.toFixed(1)} s (${(SEEDS / seconds).toFixed(1)} seeds/s)`);
    expect(found).toEqual([]);
  }, 600_000);
});
