import type { LockResponse } from "@leasehold/protocol";
import { LeaseholdError } from "@leasehold/protocol";
import { afterEach, describe, expect, it } from "vitest";
import { handOverEntry, ShardReplicaSink, snapshotShard } from "../../../src/cluster/replication/replicated-tables.js";
import type { ShardTerm } from "../../../src/cluster/shard-term.js";
import type { TestBreak } from "../../../src/cluster/test-breaks.js";
import type { WaitingLockHandle } from "../../../src/service/waiting-lock-handle.js";
import { InMemoryLockService } from "../../../src/service/in-memory-lock-service.js";
import { expiredRow, promotionBed } from "./promotion-fixture.js";

const LEASE_MS = 6_000;
const LEADER_LEASE_MS = 3_000;
/** What the leader had left of its lease-wait when its standby's snapshot was taken. */
const LEFT_MS = 4_000;

/** A term of shard 0 promoted from a replica inside its leader's lease-wait, with the places the leader's hand-over entry carried (if any). */
async function promotedInsideTheWait(heldBack: Parameters<typeof handOverEntry>[0], breaks: TestBreak[] = []) {
  const leader = new InMemoryLockService({ leaderId: "L5", leaseMs: LEASE_MS });
  await leader.startTransactions("ns", { count: 1 });
  const snapshot = snapshotShard(leader, LEFT_MS);
  await leader.close();
  const bed = promotionBed(snapshot as unknown as Record<string, unknown>, {
    leaseMs: LEASE_MS,
    leaderLeaseMs: LEADER_LEASE_MS,
    breaks,
    sink: (clock) => new ShardReplicaSink(new InMemoryLockService({ replica: true, leaderId: "L5", leaseMs: LEASE_MS, clock }), clock),
    coordinator: { acquire: async () => ({ shard: 0, epoch: 6, lockDelayMs: LEASE_MS / 2 }) },
  });
  (bed.sink as unknown as ShardReplicaSink<InMemoryLockService>).apply(handOverEntry(heldBack));
  bed.advance(100);
  await bed.starter.acquire(expiredRow);
  const term = bed.terms[0];
  if (term === undefined) throw new Error(`no term started: ${bed.warnings.join("; ")}`);
  await new Promise((r) => setImmediate(r));
  return { bed, term };
}

const lock = (term: ShardTerm, requestId: string) =>
  term.beginLock("ns", { requestId, locks: [{ descriptor: "x", mode: "exclusive" }], acquireTimeoutMs: 10_000 }) as WaitingLockHandle<LockResponse>;

/** Resolves to the status each handle has settled with by now ("waiting" when none). */
async function statuses(handles: Record<string, WaitingLockHandle<LockResponse>>): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const [name, h] of Object.entries(handles)) {
    out[name] = "waiting";
    void h.answer.then((a) => (out[name] = a.status), (e: unknown) => (out[name] = e instanceof LeaseholdError ? e.code : "error"));
  }
  await new Promise((r) => setImmediate(r));
  return out;
}

describe("a hand-over inside the lease-wait carries the held-back line's order (pnpm sim, seed 760)", () => {
  const beds: ReturnType<typeof promotionBed>[] = [];
  afterEach(() => {
    for (const bed of beds.splice(0)) bed.end();
  });

  it("the leader's held-back requests are the places its hand-over entry carries, in line order, with the time left to each deadline", async () => {
    const { bed, term } = await promotedInsideTheWait({});
    beds.push(bed);
    expect(term.waiting).toBe(true);
    lock(term, "c1-9");
    bed.advance(500);
    lock(term, "c2-6");
    term.beginLock("ns", { locks: [{ descriptor: "y", mode: "exclusive" }], acquireTimeoutMs: 10_000 });
    term.end(new LeaseholdError("UNAVAILABLE", "stopped leading shard 0 (this server is shutting down)"), true);
    expect(term.heldBackPlaces()).toEqual({ ns: [{ requestId: "c1-9", remainingMs: 9_500 }, { requestId: "c2-6", remainingMs: 10_000 }] });
    expect(handOverEntry(term.heldBackPlaces())).toEqual({ handOver: true, heldBack: { ns: [{ requestId: "c1-9", remainingMs: 9_500 }, { requestId: "c2-6", remainingMs: 10_000 }] } });
    expect(handOverEntry({})).toEqual({ handOver: true });
  });

  it("the taker grants in the carried order, whatever order the re-sends arrive in", async () => {
    const { bed, term } = await promotedInsideTheWait({ ns: [{ requestId: "c1-9", remainingMs: 9_000 }, { requestId: "c2-6", remainingMs: 9_000 }] });
    beds.push(bed);
    expect(term.waiting).toBe(true);
    const c2 = lock(term, "c2-6");
    bed.advance(200);
    const c1 = lock(term, "c1-9");
    bed.advance(LEFT_MS * 2);
    expect(term.waiting).toBe(false);
    expect(await statuses({ c1, c2 })).toEqual({ c1: "acquired", c2: "waiting" });
  });

  it("a place nobody claims within the claim window is dropped: the line goes on without it", async () => {
    const { bed, term } = await promotedInsideTheWait({ ns: [{ requestId: "gone", remainingMs: 9_000 }, { requestId: "c2-6", remainingMs: 9_000 }] });
    beds.push(bed);
    const c2 = lock(term, "c2-6");
    bed.advance(LEFT_MS * 2);
    expect(term.waiting).toBe(false);
    // The place is kept for 2 s from the promotion; the wait ended later, so it is gone by then.
    expect(await statuses({ c2 })).toEqual({ c2: "acquired" });
  });

  it("negative control (drop-carried-waiters): the taker keeps no place, the later-queued re-send goes first", async () => {
    const { bed, term } = await promotedInsideTheWait({ ns: [{ requestId: "c1-9", remainingMs: 9_000 }, { requestId: "c2-6", remainingMs: 9_000 }] }, ["drop-carried-waiters"]);
    beds.push(bed);
    const c2 = lock(term, "c2-6");
    bed.advance(200);
    const c1 = lock(term, "c1-9");
    bed.advance(LEFT_MS * 2);
    expect(term.waiting).toBe(false);
    expect(await statuses({ c1, c2 })).toEqual({ c1: "waiting", c2: "acquired" });
  });

  it("a sink refuses a malformed carried line, and forgets a hand-over's line once the leader appends again (it kept the shard)", () => {
    const sink = new ShardReplicaSink({ restoreNamespace: () => undefined, applyEntry: () => undefined, close: async () => undefined }, () => 0);
    sink.restore({ namespaces: {} });
    expect(() => sink.apply({ handOver: true, heldBack: { ns: [{ requestId: 3, remainingMs: 1 }] } })).toThrow(/heldBack/);
    sink.apply(handOverEntry({ ns: [{ requestId: "a", remainingMs: 100 }] }));
    expect(sink.heldBackPlaces()).toEqual({ ns: [{ requestId: "a", remainingMs: 100 }] });
    sink.apply({ ns: "ns", entry: {} });
    expect(sink.heldBackPlaces()).toEqual({});
  });
});
