import { describe, expect, it } from "vitest";
import type { TestBreak } from "@leasehold/server/internal";
import { runSeed } from "../src/sim-run.js";

/**
 * Seeds on which `pnpm sim` once found a violation with every rule in place, each kept as a
 * regression test once fixed: the run of the seed must keep every promise. Where the seed's run
 * still reaches the same interleaving, it names the rule its fix added, whose break must make that
 * same seed fail again (the negative control). A change to the simulator changes every seed's run,
 * so a seed may stop reaching its interleaving: its rule's control then lives in the breaks table
 * (docs/reliability.md) and the unit test named there.
 */
const FIXED: readonly { seed: number; finding: string; rule?: TestBreak }[] = [
  {
    seed: 24,
    finding: "a balance hand-over to a taker cut off from PostgreSQL: it never adopts, the row expires and is taken empty (locks lost)",
  },
  {
    seed: 79,
    finding: "the same, two shards handed to a member whose database path is cut",
  },
  {
    seed: 71,
    finding:
      "with the former leader named in-sync standby, the taker (its NOTIFY lost) left the handed-over row to that standby as a synced orphan instead of adopting it, and the former leader, its database slow, did not take it over in time",
  },
  {
    seed: 108,
    finding: "a standby's takeover term, balanced away before the leader side attached its replicator, was released as if unreplicated, with a lock granted meanwhile (no fault)",
    rule: "balance-by-release",
  },
  {
    seed: 322,
    finding: "a member still running a superseded term of a shard adopted the shard handed to it, started nothing (\"led already\"), and later released the adopted row with every lock",
  },
  {
    seed: 366,
    finding: "a term acquired after an expiry was handed over for balance inside its lease-wait; the taker served at once and granted a lock the dead leader's client still held (a second holder)",
    rule: "hand-over-during-lease-wait",
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
