import type { StartTransactionsResponse } from "@leasehold/protocol";
import { afterEach, describe, expect, it } from "vitest";
import { RATE_TOLERANCE } from "../../../src/cluster/margins.js";
import { ShardReplicaSink, snapshotShard } from "../../../src/cluster/replication/replicated-tables.js";
import type { TestBreak } from "../../../src/cluster/test-breaks.js";
import { InMemoryLockService } from "../../../src/service/in-memory-lock-service.js";
import { expiredRow, promotionBed } from "./promotion-fixture.js";

const LEASE_MS = 6_000;
const LEADER_LEASE_MS = 3_000;
/** What the leader "a" had left of its lease-wait when its standby's snapshot was taken. */
const LEFT_MS = 20_000;

/**
 * Leader "a" took shard 0 empty while an earlier leader's leases could still run (its lease-wait:
 * no lock granted, but `transactions/start` served at once, so a transaction's immutable-timestamp
 * lock is held), and its standby "b" got a snapshot with 20 s of that wait left. `a` dies 1 s later
 * and `b` takes the shard over with its replica (pnpm sim, seed 346: a SIGTERM that released such
 * a term lost the transaction's lock; handing it over instead is safe only if the taker waits out
 * the rest).
 */
async function takenOverInsideTheWait(breaks: TestBreak[] = []) {
  const leader = new InMemoryLockService({ leaderId: "L5", leaseMs: LEASE_MS });
  const txn = (await leader.startTransactions("ns", { count: 1 })) as StartTransactionsResponse;
  const snapshot = snapshotShard(leader, LEFT_MS);
  await leader.close();
  expect(snapshot.leaseWaitLeftMs).toBe(LEFT_MS);
  const bed = promotionBed(snapshot as unknown as Record<string, unknown>, {
    leaseMs: LEASE_MS,
    leaderLeaseMs: LEADER_LEASE_MS,
    breaks,
    sink: (clock) => new ShardReplicaSink(new InMemoryLockService({ replica: true, leaderId: "L5", leaseMs: LEASE_MS, clock }), clock),
    coordinator: { acquire: async () => ({ shard: 0, epoch: 6, lockDelayMs: LEASE_MS / 2 }) },
  });
  bed.advance(1_000);
  await bed.starter.acquire(expiredRow);
  const term = bed.terms[0];
  if (term === undefined) throw new Error(`no term started: ${bed.warnings.join("; ")}`);
  // The carried namespace's bound loads before the term serves.
  await new Promise((r) => setImmediate(r));
  return { bed, term, token: txn.transactions[0]!.token };
}

describe("a table promoted inside its leader's lease-wait waits out the rest of it (DESIGN.md 'Failover without a standby', 'Takeover by the standby')", () => {
  const beds: ReturnType<typeof promotionBed>[] = [];
  afterEach(() => {
    for (const bed of beds.splice(0)) bed.end();
  });

  it("keeps the transaction's immutable-timestamp lock, and grants no lock until the rest of the wait (counted from the snapshot's restore, with the rate margin) is over", async () => {
    const { bed, term, token } = await takenOverInsideTheWait();
    beds.push(bed);
    expect((await term.service.refresh("ns", { tokens: [token] })).refreshed).toEqual([token]);
    expect(term.waiting).toBe(true);
    const lock = (descriptor: string) => term.beginLock("ns", { locks: [{ descriptor, mode: "exclusive" }], acquireTimeoutMs: 0 }) as { status?: string };
    expect(lock("x").status).not.toBe("acquired");
    // The rest: 20 s and its 10% margin from the restore, of which 1 s passed before the takeover.
    const rest = LEFT_MS + Math.ceil(LEFT_MS * RATE_TOLERANCE) - 1_000;
    bed.advance(rest - 10);
    expect(term.waiting).toBe(true);
    bed.advance(20);
    expect(term.waiting).toBe(false);
    expect(lock("y").status).toBe("acquired");
  });

  it("negative control (drop-carried-lease-wait): the taker grants at once, while the earlier leader's leases may still run", async () => {
    const { bed, term } = await takenOverInsideTheWait(["drop-carried-lease-wait"]);
    beds.push(bed);
    expect(term.waiting).toBe(false);
    expect((term.beginLock("ns", { locks: [{ descriptor: "x", mode: "exclusive" }], acquireTimeoutMs: 0 }) as { status?: string }).status).toBe("acquired");
  });

  it("a snapshot taken after the wait carries none", () => {
    expect(snapshotShard({ exportNamespaces: () => ({}) }, 0)).toEqual({ namespaces: {} });
    const sink = new ShardReplicaSink({ restoreNamespace: () => undefined, applyEntry: () => undefined, close: async () => undefined }, () => 0);
    sink.restore({ namespaces: {} });
    expect(sink.leaseWaitLeftMs()).toBe(0);
    expect(() => sink.restore({ namespaces: {}, leaseWaitLeftMs: -1 })).toThrow(/leaseWaitLeftMs/);
  });
});
