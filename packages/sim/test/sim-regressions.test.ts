import { describe, expect, it } from "vitest";
import type { TestBreak } from "@leasehold/server/internal";
import { runSeed } from "../src/sim-run.js";

/**
 * Seeds on which `pnpm sim` once found a violation with every rule in place, each kept as a
 * regression test once fixed: the run of the seed must keep every promise. Each names the rule its
 * fix added, whose break must make that same seed fail again (the negative control).
 */
const FIXED: readonly { seed: number; finding: string; rule?: TestBreak }[] = [
  {
    seed: 24,
    finding: "a balance hand-over to a taker cut off from PostgreSQL: it never adopts, the row expires and is taken empty (locks lost)",
    rule: "handed-over-without-former",
  },
  {
    seed: 79,
    finding: "the same, two shards handed to a member whose database path is cut",
    rule: "handed-over-without-former",
  },
  {
    seed: 71,
    finding:
      "with the former leader named in-sync standby, the taker (its NOTIFY lost) left the handed-over row to that standby as a synced orphan instead of adopting it, and the former leader, its database slow, did not take it over in time",
  },
];

describe("seeds the simulator once failed on", () => {
  for (const { seed, finding, rule } of FIXED) {
    it(`seed ${seed} keeps every promise (${finding})`, async () => {
      const result = await runSeed(seed, new Set());
      expect(result.violations).toEqual([]);
    });

    if (rule !== undefined) {
      it(`seed ${seed} breaks a promise again with ${rule} (the negative control)`, async () => {
        const result = await runSeed(seed, new Set([rule]));
        expect(result.violations.length).toBeGreaterThan(0);
      });
    }
  }
});
