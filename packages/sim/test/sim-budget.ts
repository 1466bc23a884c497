import { describe, expect, it } from "vitest";
import { runSeed } from "../src/sim-run.js";

/**
 * The test command's fixed budget of the deterministic simulation (issue 31) is seeds 1–1,000 with
 * every rule in place, each a whole run (three servers, five clients and a lock-watch follower, a
 * fault plan over 42 simulated seconds), and every seed must keep every promise. It is split in
 * two files of 500 seeds (`sim-budget-1-500.test.ts`, `sim-budget-501-1000.test.ts`) so the
 * parallel project's two workers run the halves side by side: one file of 1,000 seeds kept one core
 * busy for 142 s at the end of that project while the other had nothing left to run.
 */
export function describeSeedBudget(first: number, last: number): void {
  describe(`pnpm sim's budget in the test command: seeds ${first}–${last}`, () => {
    it("every seed keeps every promise (every invariant of sim-history.ts: exclusion, permits, fencing and timestamp order, durability, wait-for-locks, immutable timestamp, leader and log ids, lock watches, queue order, liveness)", async () => {
      const started = performance.now();
      const found: string[] = [];
      for (let seed = first; seed <= last; seed++) {
        for (const v of (await runSeed(seed, new Set())).violations) found.push(`seed ${seed}: ${v.invariant}: ${v.detail} (replay: pnpm sim --seed ${seed} --seeds 1 --trace 200)`);
      }
      const seconds = (performance.now() - started) / 1000;
      const count = last - first + 1;
      console.log(`sim budget: seeds ${first}-${last}, ${found.length} violations, ${seconds.toFixed(1)} s (${(count / seconds).toFixed(1)} seeds/s)`);
      expect(found).toEqual([]);
    }, 600_000);
  });
}
