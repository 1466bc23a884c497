import { afterEach, describe, expect, it } from "vitest";
import type { AdoptedTerm, HeldTerm, ShardLease } from "../../../src/cluster/coordinator.js";
import type { TestBreak } from "../../../src/cluster/test-breaks.js";
import { expiredRow, grantedImage, promotionBed } from "./promotion-fixture.js";

/** What a statement that committed and then reported a timeout rejects with. */
const timeout = (): Promise<never> => Promise.reject(new Error("Query read timeout (the statement committed)"));

/** Shard 0's row as a committed takeover (or hand-over) to b leaves it: b-1 at epoch 6, L5 kept. */
const movedRow: ShardLease = { ...expiredRow, holder: "b", incarnation: "b-1", url: "http://b", epoch: 6, version: 41, expired: false, standbyId: null, standbyIncarnation: null, inSync: false };

/** An adoption statement that matched: the term at `epoch`, no bounds loaded. */
const adopted = async (shard: number, epoch: number): Promise<AdoptedTerm> => ({ shard, epoch, lockDelayMs: 5_000, bounds: [] });

describe("a takeover or adoption whose statement's outcome is unknown keeps the replica until the row is read again", () => {
  const beds: ReturnType<typeof promotionBed>[] = [];
  afterEach(() => {
    for (const bed of beds.splice(0)) bed.end();
  });

  async function bedWith(coordinator: Parameters<typeof promotionBed>[1]["coordinator"], breaks: TestBreak[] = []) {
    const { images, token } = await grantedImage(10_000);
    const bed = promotionBed(images, { leaseMs: 10_000, leaderLeaseMs: 3_000, coordinator, breaks });
    beds.push(bed);
    return { bed, token };
  }

  /** The runtime's next read of the rows (`ClusterRuntime.observe`): orphans are adopted with the replica or answered to release. */
  async function nextRead(bed: ReturnType<typeof promotionBed>, rows: ShardLease[], orphans: HeldTerm[]): Promise<HeldTerm[]> {
    const adoptions: Promise<void>[] = [];
    const release = bed.promoter.adoptOrAnswer(orphans, rows, (row, candidate) => {
      const adoption = bed.starter.adopt(row, candidate);
      adoptions.push(adoption);
      return adoption;
    });
    await Promise.all(adoptions);
    await new Promise((r) => setImmediate(r));
    return release;
  }

  async function refreshed(bed: ReturnType<typeof promotionBed>, token: string): Promise<string[]> {
    const term = bed.terms[0];
    if (term === undefined) throw new Error(`no term started: ${bed.warnings.join("; ")}`);
    return (await term.service.refresh("ns", { tokens: [token] })).refreshed;
  }

  async function committedTakeover(breaks: TestBreak[] = []) {
    const { bed, token } = await bedWith({ acquire: timeout, adoptHandOver: (shard: number, epoch: number) => adopted(shard, epoch) }, breaks);
    await bed.starter.acquire(expiredRow);
    expect(bed.terms).toEqual([]);
    // A stale-replica drop meanwhile (any read of the row at epoch 6) must not take it away either.
    bed.store.drop(0);
    const release = await nextRead(bed, [movedRow], [{ shard: 0, epoch: 6 }]);
    return { bed, token, release };
  }

  it("a takeover that committed although its statement failed: the next read finds the row naming this process at the new epoch and starts the term with the replica", async () => {
    const { bed, token, release } = await committedTakeover();
    expect(release).toEqual([]);
    expect(bed.terms[0]?.epoch).toBe(6);
    expect(bed.terms[0]?.leaderId).toBe("L5");
    expect(bed.terms[0]?.carried?.tokens).toBe(1);
    expect(await refreshed(bed, token)).toEqual([token]);
  });

  it("a takeover that did not commit: the row is unchanged, the replica stays, and the next takeover carries it", async () => {
    let fail = true;
    const { bed, token } = await bedWith({ acquire: async (shard: number) => (fail ? timeout() : { shard, epoch: 6, lockDelayMs: 5_000 }) });
    await bed.starter.acquire(expiredRow);
    expect(await nextRead(bed, [expiredRow], [])).toEqual([]);
    // The replica is no longer pinned: a drop (a later epoch read) would forget it, as always.
    fail = false;
    await bed.starter.acquire(expiredRow);
    await new Promise((r) => setImmediate(r));
    expect(bed.terms[0]?.carried?.tokens).toBe(1);
    expect(await refreshed(bed, token)).toEqual([token]);
  });

  it("an adoption of a hand-over that committed although its statement failed is tried again on the next read, with the replica", async () => {
    let fail = true;
    const { bed, token } = await bedWith({ adoptHandOver: (shard: number, epoch: number) => (fail ? timeout() : adopted(shard, epoch)) });
    expect(await nextRead(bed, [movedRow], [{ shard: 0, epoch: 6 }])).toEqual([]);
    expect(bed.terms).toEqual([]);
    bed.store.drop(0);
    fail = false;
    expect(await nextRead(bed, [movedRow], [{ shard: 0, epoch: 6 }])).toEqual([]);
    expect(bed.terms[0]?.carried?.tokens).toBe(1);
    expect(await refreshed(bed, token)).toEqual([token]);
  });

  it("an adoption on a NOTIFY whose statement failed leaves the replica for the next read, which adopts the row with it", async () => {
    let fail = true;
    const { bed, token } = await bedWith({ adoptHandOver: (shard: number, epoch: number) => (fail ? timeout() : adopted(shard, epoch)) });
    expect(await bed.starter.adoptOnNotify(0, expiredRow)).toBe(false);
    bed.store.drop(0);
    fail = false;
    expect(await nextRead(bed, [movedRow], [{ shard: 0, epoch: 6 }])).toEqual([]);
    expect(await refreshed(bed, token)).toEqual([token]);
  });

  it("a takeover whose statement matched nothing keeps the replica (this member is still the standby)", async () => {
    const { bed } = await bedWith({ acquire: async () => null });
    await bed.starter.acquire(expiredRow);
    expect(bed.store.get(0)).toBeDefined();
    expect(bed.sink.disposed).toBe(false);
  });

  it("negative control (drop-replica-on-unknown): the failed takeover's replica is gone, and the row it committed is released as an orphan with every lock", async () => {
    const { bed, release } = await committedTakeover(["drop-replica-on-unknown"]);
    expect(release).toEqual([{ shard: 0, epoch: 6 }]);
    expect(bed.terms).toEqual([]);
    expect(bed.sink.disposed).toBe(true);
  });
});
