/**
 * Issue 21, negative control "moving the row before the gate closes", on a balance hand-over (the
 * old leader's listener stays open; at SIGTERM it closes first, so nothing could show it there).
 * Two CLI servers, timestamp loops asking both directly: intact, the old term stops serving before
 * the taker starts; with `move-row-before-gate` both serve the shard at once and the
 * one-leader-serving and timestamp-order checks fire. Needs `pnpm build` and PostgreSQL. Soak mode
 * only: the simulator finds this break within its first seeds (`packages/sim/test/sim-regressions.test.ts`),
 * and the test command's proof of a break's wiring in real servers is the control of
 * `packages/server/test/cluster/replication/cluster-hand-over-pass.test.ts`. Listed in SOAK_ONLY
 * (vitest.config.ts): the test command does not even start it.
 */
import { describe, expect, it } from "vitest";
import { MOVE_ROW_CHECK, MOVE_ROW_TIMESTAMP_CHECK, runMoveRowControl } from "../../src/cluster/control-move-row.js";
import { runHalf } from "../../src/cluster/cluster-controls.js";
import { SOAK } from "../../src/report/index.js";

const seed = Number(process.env.LEASEHOLD_SEED ?? Date.now() % 2 ** 31);

describe("negative control: moving the row before the gate closes (balance hand-over)", () => {
  it.runIf(SOAK)(
    "with the row moved first, the old term serves on while the taker serves: the one-leader-serving and timestamp-order checks fire; intact, every check stays silent",
    async () => {
      const removed = await runHalf(runMoveRowControl, seed, true);
      expect(removed.facts.handedOver, "rule removed: the balance hand-over happened").toBe(1);
      expect(removed.facts.takerServed, "rule removed: the taker was promoted").toBe(1);
      expect(removed.violations.count(MOVE_ROW_CHECK), `seed ${seed}, rule removed: the check did not fire\n${removed.violations.describe()}`).toBeGreaterThan(0);
      expect(removed.violations.count(MOVE_ROW_TIMESTAMP_CHECK), `seed ${seed}, rule removed: timestamp order did not fire\n${removed.violations.describe()}`).toBeGreaterThan(0);
      const intact = await runHalf(runMoveRowControl, seed + 5, false);
      expect(intact.facts.handedOver, "rule intact: the balance hand-over happened").toBe(1);
      expect(intact.facts.takerServed, "rule intact: the taker was promoted").toBe(1);
      expect(intact.violations.total, `seed ${seed}, rule intact:\n${intact.violations.describe()}`).toBe(0);
    },
    120_000,
  );
});
