import { afterEach, describe, expect, it } from "vitest";
import { leaseWaitEnd } from "../../../src/cluster/margins.js";
import type { TestBreak } from "../../../src/cluster/test-breaks.js";
import { expiredRow, grantedImage, promotionBed } from "./promotion-fixture.js";

/** The old leader ran `--lease-ms 60000` (validForMs 30 s); the standby runs 6000 (validForMs 3 s). */
const OLD_LEASE_MS = 60_000;
const OWN_LEASE_MS = 6_000;
const LEADER_LEASE_MS = 3_000;

describe("carried leases restart at the longest validForMs an earlier leader answered, plus the clock margin (DESIGN.md 'Carried leases')", () => {
  const beds: ReturnType<typeof promotionBed>[] = [];
  afterEach(() => {
    for (const bed of beds.splice(0)) bed.end();
  });

  /** b takes shard 0 over with its replica; the acquisition answers the row's record (the old leader's validForMs). */
  async function takenOver(breaks: TestBreak[] = []) {
    const { images, validForMs, token } = await grantedImage(OLD_LEASE_MS);
    expect(validForMs).toBe(30_000);
    const bed = promotionBed(images, {
      leaseMs: OWN_LEASE_MS,
      leaderLeaseMs: LEADER_LEASE_MS,
      breaks,
      coordinator: { acquire: async () => ({ shard: 0, epoch: 6, lockDelayMs: validForMs }) },
    });
    beds.push(bed);
    await bed.starter.acquire(expiredRow);
    const term = bed.terms[0];
    if (term === undefined) throw new Error(`no term started: ${bed.warnings.join("; ")}`);
    expect(term.carried?.tokens).toBe(1);
    // The carried namespace's bound loads before the term serves.
    await new Promise((r) => setImmediate(r));
    return { bed, term, validForMs, token };
  }

  it("a holder promised 30 s by a leader with a longer --lease-ms keeps its lock past the taker's own lease, until the promise and its margin ran out", async () => {
    const { bed, term, validForMs } = await takenOver();
    const until = leaseWaitEnd(0, validForMs, LEADER_LEASE_MS);
    // Well past the taker's own lease (6 s): the lock is still held.
    bed.advance(OWN_LEASE_MS + 1_000);
    expect(bed.contend(term).status).not.toBe("acquired");
    bed.advance(until - (OWN_LEASE_MS + 1_000) - 10);
    expect(bed.contend(term).status).not.toBe("acquired");
    // Once the promise (counted from the takeover, so longer than the holder's) and the margin ran out, it lapses.
    bed.advance(20);
    expect(bed.contend(term).status).toBe("acquired");
  });

  it("a refresh at the taker answers its own, shorter validForMs but never shortens the carried lease", async () => {
    const { bed, term, token } = await takenOver();
    bed.advance(1_000);
    const answer = await term.service.refresh("ns", { tokens: [token] });
    expect(answer.refreshed).toEqual([token]);
    expect(answer.lease.validForMs).toBe(OWN_LEASE_MS / 2);
    // The taker's own lease from the refresh (1 s + 6 s) has run out; the carried one has not.
    bed.advance(OWN_LEASE_MS + 1_000);
    expect(bed.contend(term).status).not.toBe("acquired");
  });

  it("a lock granted after the promotion and never refreshed lapses after the taker's own lease, while the carried one is still held", async () => {
    const { bed, term } = await takenOver();
    bed.advance(1_000);
    const fresh = () => term.beginLock("ns", { locks: [{ descriptor: "fresh", mode: "exclusive" }], acquireTimeoutMs: 0 }) as { status: string };
    expect(fresh().status).toBe("acquired");
    bed.advance(OWN_LEASE_MS - 10);
    expect(fresh().status).not.toBe("acquired");
    bed.advance(20);
    expect(fresh().status).toBe("acquired");
    expect(bed.contend(term).status).not.toBe("acquired");
  });

  it("negative control (short-carried-lease): restarted at the taker's own lease, another client gets the lock ~7 s after the takeover", async () => {
    const { bed, term } = await takenOver(["short-carried-lease"]);
    bed.advance(OWN_LEASE_MS + 1_000);
    expect(bed.contend(term).status).toBe("acquired");
  });
});
