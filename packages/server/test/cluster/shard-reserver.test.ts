import { LeaseholdError } from "@leasehold/protocol";
import pg from "pg";
import { describe, expect, it } from "vitest";
import type { Coordinator, HeldTerm, StoredBound } from "../../src/cluster/coordinator.js";
import { createPostgresCoordinator } from "../../src/cluster/postgres/postgres-coordinator.js";
import { ShardReserver, type ShardReserverHooks } from "../../src/cluster/shard-reserver.js";
import { schemaPerTest, type Closable } from "./pg-schema.js";

/** Hooks that record what the reserver reported. */
function recordingHooks(): ShardReserverHooks & { deposed: string[]; errors: unknown[] } {
  const deposed: string[] = [];
  const errors: unknown[] = [];
  return { deposed, errors, onDeposed: (reason) => deposed.push(reason), onExtended: () => undefined, onError: (_ns, err) => errors.push(err) };
}

describe("ShardReserver: the counter's floor", () => {
  it("refuses to hand out numbers at or below the stored bound it loaded, whatever asks", async () => {
    const stored: StoredBound = { bound: 1_000, immutable: null, epoch: 3 };
    const coordinator = {
      readBound: () => Promise.resolve(stored),
      extendBound: () => Promise.resolve(true),
    } as unknown as Coordinator;
    const reserver = new ShardReserver(coordinator, { shard: 0, epoch: 4 }, 100, recordingHooks());
    await reserver.prepare("ns");
    expect(reserver.floor("ns")).toBe(1_000);
    // A counter that started from 1 (a floor cached before the bound was loaded) is refused.
    for (const upTo of [1, 999, 1_000]) {
      let refused: unknown = null;
      try {
        reserver.reserve("ns", upTo);
      } catch (err) {
        refused = err;
      }
      expect(refused).toBeInstanceOf(LeaseholdError);
      expect((refused as LeaseholdError).message).toMatch(/numbers up to 1000 may already have been handed out/);
    }
    // Above the floor it serves as usual, within the stored block.
    expect(reserver.reserve("ns", 1_001)).toBeGreaterThanOrEqual(1_001);
  });
});

describe("ShardReserver: a first bound extension that lands late", () => {
  const bed = schemaPerTest<Closable>();

  it("attempt 1 times out and commits after attempt 2's read: attempt 2's compare-and-set matches nothing, the reserver re-reads and adopts its own extension instead of stepping down", async () => {
    const real = createPostgresCoordinator({ connectionString: bed.schema.connectionString });
    bed.open.push(real);
    await real.start(1);
    const term = (await real.acquire(0, 0, { serverId: "a", incarnation: "a-1", url: "http://a", leaderId: "a-term", leaderLeaseMs: 60_000, lockLeaseMs: 100, validForMs: 50 }))!;
    // The fault: a row lock on the lease row stalls attempt 1 (its FOR SHARE waits) while its
    // answer times out; attempt 2 reads the old bound, and only then does attempt 1 commit.
    const blocker = new pg.Client({ connectionString: bed.schema.connectionString });
    await blocker.connect();
    bed.open.push({ close: () => blocker.end() });
    await blocker.query("BEGIN");
    await blocker.query("SELECT 1 FROM leases WHERE shard = 0 FOR UPDATE");
    let attempt = 0;
    let first: Promise<boolean> | null = null;
    const order: string[] = [];
    const faulty: Coordinator = {
      ...real,
      readBound: async (namespace) => {
        const stored = await real.readBound(namespace);
        order.push(`read ${stored.bound}/${stored.epoch}`);
        return stored;
      },
      extendBound: async (namespace: string, held: HeldTerm, from: number, to: number, immutable?: number) => {
        attempt++;
        if (attempt === 1) {
          first = real.extendBound(namespace, held, from, to, immutable);
          // Outcome unknown: the statement goes on in PostgreSQL after its answer timed out.
          await new Promise((r) => setTimeout(r, 100));
          order.push("attempt 1 timed out");
          throw new Error("Query read timeout");
        }
        if (attempt === 2) {
          await blocker.query("COMMIT");
          expect(await first).toBe(true);
          order.push("attempt 1 committed");
        }
        const ok = await real.extendBound(namespace, held, from, to, immutable);
        order.push(`attempt ${attempt} ${ok ? "matched" : "matched nothing"}`);
        return ok;
      },
    };
    const hooks = recordingHooks();
    const reserver = new ShardReserver(faulty, term, 1_000, hooks);
    await reserver.prepare("late");
    expect(order).toEqual(["read 0/0", "attempt 1 timed out", "read 0/0", "attempt 1 committed", "attempt 2 matched nothing", "read 1000/1"]);
    expect(hooks.deposed).toEqual([]);
    expect(reserver.isPrepared("late")).toBe(true);
    expect(reserver.floor("late")).toBe(0);
    // It serves from its own extension: numbers up to the bound attempt 1 stored.
    expect(reserver.reserve("late", 1)).toBeGreaterThanOrEqual(1);
    expect((await real.readBound("late")).bound).toBe(1_000);
  });

  it("an extension that matched nothing on a row that did not move (the epoch fence failed) still steps down", async () => {
    const real = createPostgresCoordinator({ connectionString: bed.schema.connectionString });
    bed.open.push(real);
    await real.start(1);
    const claim = { serverId: "a", incarnation: "a-1", url: "http://a", leaderId: "a-term", leaderLeaseMs: 100, lockLeaseMs: 100, validForMs: 50 };
    const old = (await real.acquire(0, 0, claim))!;
    await new Promise((r) => setTimeout(r, 200));
    await real.acquire(0, (await real.readLeases())[0]!.version, { ...claim, serverId: "b", incarnation: "b-1", leaderId: "b-term", leaderLeaseMs: 60_000 });
    const hooks = recordingHooks();
    const reserver = new ShardReserver(real, old, 1_000, hooks);
    await reserver.prepare("fenced");
    expect(hooks.deposed).toHaveLength(1);
    expect(hooks.deposed[0]).toMatch(/matched nothing: epoch 1 no longer leads shard 0/);
    expect(reserver.isPrepared("fenced")).toBe(false);
  });
});

describe("ShardReserver: a later extension that lands late", () => {
  it("an extension times out but lands; the next one's compare-and-set matches nothing; the re-read shows this epoch's bound, so it carries on from it", async () => {
    let stored: StoredBound = { bound: 0, immutable: null, epoch: 0 };
    const calls: string[] = [];
    let landLate: (() => void) | null = null;
    const coordinator = {
      readBound: () => Promise.resolve(stored),
      extendBound: (_ns: string, term: HeldTerm, from: number, to: number) => {
        calls.push(`${from}→${to}`);
        if (stored.bound !== from) return Promise.resolve(false);
        if (calls.length === 2) {
          // The statement's answer is lost (a timeout); it commits later, before the next attempt.
          landLate = () => (stored = { bound: to, immutable: null, epoch: term.epoch });
          return Promise.reject(new Error("Query read timeout"));
        }
        stored = { bound: to, immutable: null, epoch: term.epoch };
        return Promise.resolve(true);
      },
    } as unknown as Coordinator;
    const hooks = recordingHooks();
    const reserver = new ShardReserver(coordinator, { shard: 0, epoch: 1 }, 100, hooks);
    await reserver.prepare("ns");
    expect(reserver.reserve("ns", 60)).toBe(100); // past half the block: the next extension starts
    await new Promise((r) => setTimeout(r, 0));
    expect(hooks.errors).toHaveLength(1);
    landLate!();
    reserver.reserve("ns", 61); // starts another extension from 100: matches nothing now
    await new Promise((r) => setTimeout(r, 0));
    await new Promise((r) => setTimeout(r, 0));
    expect(calls).toEqual(["0→100", "100→200", "100→200"]);
    expect(hooks.deposed).toEqual([]);
    // It adopted its own landed extension: numbers up to 200 are served.
    expect(reserver.reserve("ns", 150)).toBe(200);
  });
});
