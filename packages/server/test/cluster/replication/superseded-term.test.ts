import { afterEach, describe, expect, it } from "vitest";
import { grantedImage, handedRow, promotionBed } from "./promotion-fixture.js";


/**
 * Found by pnpm sim (seed 322 of the grant-time client): "b" still ran a term of shard 0 from
 * epoch 3 (its gate closed, its renewals not yet answered "matched nothing") when the shard, taken
 * over meanwhile at epoch 5, was handed to it at epoch 6. Its adoption matched, but the starter saw
 * the shard "led already" and started nothing: the replica, already taken out of the store, was
 * gone, and the row, adopted but unserved, was later released as an orphan with every lock.
 */
describe("a claim that matched while this process still runs a superseded term of the shard", () => {
  const beds: ReturnType<typeof promotionBed>[] = [];
  afterEach(() => {
    for (const bed of beds.splice(0)) bed.end();
  });

  /** "b" with a term of shard 0 still running from `staleEpoch`, adopting the shard handed to it at epoch 6. */
  async function adoptOver(staleEpoch: number) {
    const { images } = await grantedImage(3_000);
    const bed = promotionBed(images, {
      leaseMs: 3_000,
      leaderLeaseMs: 1_000,
      staleTerm: { shard: 0, epoch: staleEpoch, isEnded: false },
      coordinator: { adoptHandOver: async () => ({ shard: 0, epoch: 6, lockDelayMs: 2_700, bounds: [] }) },
    });
    beds.push(bed);
    await bed.starter.adopt(handedRow, bed.promoter.forHandOver(handedRow)!);
    return bed;
  }

  it("ends the superseded term and starts the claimed one with the carried table", async () => {
    const bed = await adoptOver(3);
    expect(bed.failed).toEqual([{ epoch: 3, reason: expect.stringContaining("superseded") as string }]);
    expect(bed.terms.map((t) => t.epoch)).toEqual([6]);
    expect(bed.terms[0]!.carried?.tokens).toBe(1);
    // Once the carried namespace's bound loaded, the lock is held: another client's request for it is refused at once.
    await new Promise((r) => setImmediate(r));
    expect(bed.contend(bed.terms[0]!).status).toBe("timeout");
  });

  it("starts nothing for a claim of the epoch it already leads (an adoption on NOTIFY and one by a pass, both matched)", async () => {
    const bed = await adoptOver(6);
    expect(bed.failed).toEqual([]);
    expect(bed.terms).toEqual([]);
  });
});
