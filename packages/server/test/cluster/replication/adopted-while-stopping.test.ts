import { describe, expect, it } from "vitest";
import type { TestBreak } from "../../../src/cluster/test-breaks.js";
import { grantedImage, handedRow, promotionBed } from "./promotion-fixture.js";


/**
 * Found by pnpm sim (seed 143): a balance hand-over reached "b" just as it began to stop (a rolling
 * restart); its adoption landed after the stop had listed its terms, and the starter released the
 * adopted row, table and all. Left to expire, the row goes to its in-sync standby, the former
 * leader, which kept the table.
 */
describe("a hand-over adopted once this member began to stop", () => {
  async function adoptWhileStopping(breaks: TestBreak[]) {
    const { images } = await grantedImage(3_000);
    const released: number[] = [];
    const bed = promotionBed(images, {
      leaseMs: 3_000,
      leaderLeaseMs: 1_000,
      stopping: true,
      breaks,
      coordinator: {
        adoptHandOver: async () => ({ shard: 0, epoch: 6, lockDelayMs: 2_700, bounds: [] }),
        release: async (_serverId: string, terms: readonly { shard: number }[]) => {
          released.push(...terms.map((t) => t.shard));
        },
      },
    });
    await bed.starter.adopt(handedRow, bed.promoter.forHandOver(handedRow)!);
    await new Promise((r) => setImmediate(r));
    bed.end();
    return { bed, released };
  }

  it("starts nothing and does not release the row (its in-sync standby takes it over with the table)", async () => {
    const { bed, released } = await adoptWhileStopping([]);
    expect(bed.terms).toEqual([]);
    expect(released).toEqual([]);
  });

  it("negative control (stop-releases-adopted): the adopted row is released, table and all", async () => {
    const { bed, released } = await adoptWhileStopping(["stop-releases-adopted"]);
    expect(bed.terms).toEqual([]);
    expect(released).toEqual([0]);
  });
});
