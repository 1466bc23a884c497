import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Coordinator, LeaseClaim, LeaderTerm } from "../../src/cluster/coordinator.js";
import { createMemoryCoordinator } from "../../src/cluster/memory/memory-coordinator.js";
import { MemoryStore } from "../../src/cluster/memory/memory-store.js";
import { createPostgresCoordinator } from "../../src/cluster/postgres/postgres-coordinator.js";
import { createTestSchema } from "./pg-schema.js";

/**
 * The in-memory database (memory-store.ts) must answer every statement as PostgreSQL does, or the
 * simulator proves things about another system. A differential test: random sequences of the
 * coordinator's statements go to both, and every answer must be the same. Leases and heartbeats
 * are either long (60 s: live through the run) or 0 ms (expired at once on either clock), so the
 * two clocks never disagree on what has expired.
 */
const SERVERS = ["s0", "s1", "s2"] as const;
const SHARDS = 3;
const NAMESPACES = ["n0", "n1", "n2"] as const;

const server = fc.constantFrom(...SERVERS);
const shard = fc.integer({ min: 0, max: SHARDS - 1 });
const epoch = fc.integer({ min: 0, max: 4 });
const namespace = fc.constantFrom(...NAMESPACES);
const leaseMs = fc.constantFrom(0, 60_000);
const small = fc.integer({ min: 0, max: 40 });

const claimOf = (s: string, leaderLeaseMs: number, lockLeaseMs: number, validForMs: number, leaderId = `${s}-term`, withState = false): LeaseClaim => ({
  serverId: s, incarnation: `${s}-inc`, url: `http://${s}.invalid`, leaderId, leaderLeaseMs, lockLeaseMs, validForMs, withState,
});
const termOf = (s: string, sh: number, e: number): LeaderTerm => ({ serverId: s, incarnation: `${s}-inc`, shard: sh, epoch: e });

/** One statement, with what the answer is compared on (a version a server saw is read from the store first). */
type Op = { readonly name: string; readonly run: (c: Coordinator) => Promise<unknown> };

const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ s: server, ms: leaseMs, ready: fc.boolean() }).map(({ s, ms, ready }) => ({
    name: `heartbeat ${s} ${ms} ${ready}`,
    run: (c: Coordinator) => c.heartbeat({ serverId: s, incarnation: `${s}-inc`, url: `http://${s}.invalid`, ready }, ms),
  })),
  server.map((s) => ({ name: `leave ${s}`, run: (c: Coordinator) => c.leave({ serverId: s, incarnation: `${s}-inc` }) })),
  fc.record({ s: server, sh: shard, ms: leaseMs, lock: small, valid: small, stale: fc.boolean(), withState: fc.boolean() }).map((a) => ({
    name: `acquire ${JSON.stringify(a)}`,
    run: async (c: Coordinator) => {
      const seen = (await c.readLeases())[a.sh]!.version - (a.stale ? 1 : 0);
      const leaderId = a.withState ? ((await c.readLeases())[a.sh]!.leaderId ?? "none") : `${a.s}-term`;
      return c.acquire(a.sh, seen, claimOf(a.s, a.ms, a.lock * 100, a.valid * 50, leaderId, a.withState));
    },
  })),
  fc.record({ s: server, sh: shard, e: epoch, ms: leaseMs }).map((a) => ({ name: `renew ${JSON.stringify(a)}`, run: (c: Coordinator) => c.renew(a.s, [{ shard: a.sh, epoch: a.e }], a.ms) })),
  fc.record({ s: server, sh: shard, e: epoch }).map((a) => ({ name: `release ${JSON.stringify(a)}`, run: (c: Coordinator) => c.release(a.s, [{ shard: a.sh, epoch: a.e }]) })),
  fc.record({ sh: shard, e: epoch, v: small }).map((a) => ({ name: `settle ${JSON.stringify(a)}`, run: (c: Coordinator) => c.settleLeaseWait({ shard: a.sh, epoch: a.e }, a.v * 10) })),
  fc.record({ ns: namespace, sh: shard, e: epoch, by: fc.integer({ min: 1, max: 50 }), imm: fc.option(small, { nil: undefined }), guess: fc.boolean() }).map((a) => ({
    name: `extend ${JSON.stringify(a)}`,
    run: async (c: Coordinator) => {
      const from = a.guess ? 0 : (await c.readBound(a.ns)).bound;
      return c.extendBound(a.ns, { shard: a.sh, epoch: a.e }, from, from + a.by, a.imm);
    },
  })),
  fc.record({ sh: shard, e: epoch, ns: fc.array(namespace, { maxLength: 3 }), block: fc.integer({ min: 1, max: 50 }) }).map((a) => ({
    name: `load ${JSON.stringify(a)}`,
    run: async (c: Coordinator) => (await c.loadBounds({ shard: a.sh, epoch: a.e }, a.ns, a.block)).sort((x, y) => (x.namespace < y.namespace ? -1 : 1)),
  })),
  fc.record({ ns: namespace, sh: shard, e: epoch, imm: small }).map((a) => ({
    name: `record ${JSON.stringify(a)}`,
    run: (c: Coordinator) => c.recordImmutable([{ namespace: a.ns, term: { shard: a.sh, epoch: a.e }, immutable: a.imm }]),
  })),
  fc.record({ ns: namespace, sh: shard, b: small }).map((a) => ({ name: `import ${JSON.stringify(a)}`, run: (c: Coordinator) => c.importBound(a.ns, a.b, a.sh) })),
  fc.record({ s: server, sh: shard, e: epoch, to: fc.option(server, { nil: null }), round: small }).map((a) => ({
    name: `name-standby ${JSON.stringify(a)}`,
    run: (c: Coordinator) => c.nameStandby(termOf(a.s, a.sh, a.e), a.to === null ? null : { serverId: a.to, incarnation: `${a.to}-inc` }, a.round),
  })),
  fc.record({ s: server, sh: shard, e: epoch, of: server, inSync: fc.boolean(), round: small }).map((a) => ({
    name: `set-in-sync ${JSON.stringify(a)}`,
    run: (c: Coordinator) => c.setInSync(termOf(a.s, a.sh, a.e), `${a.of}-inc`, a.inSync, a.round),
  })),
  fc.record({ s: server, sh: shard, e: epoch, from: server, to: server, round: small }).map((a) => ({
    name: `move-standby ${JSON.stringify(a)}`,
    run: (c: Coordinator) => c.moveStandby(termOf(a.s, a.sh, a.e), { serverId: a.from, incarnation: `${a.from}-inc` }, { serverId: a.to, incarnation: `${a.to}-inc` }, a.round),
  })),
  fc.record({ s: server, sh: shard, e: epoch, to: server, ms: leaseMs, former: fc.boolean(), round: fc.option(small, { nil: undefined }) }).map((a) => ({
    name: `hand-over ${JSON.stringify(a)}`,
    run: (c: Coordinator) => c.handOver(termOf(a.s, a.sh, a.e), { serverId: a.to, incarnation: `${a.to}-inc` }, a.ms, a.former, a.round),
  })),
  fc.record({ s: server, sh: shard, e: epoch, ms: leaseMs, lock: small, valid: small, ns: fc.array(namespace, { maxLength: 2 }) }).map((a) => ({
    name: `adopt ${JSON.stringify(a)}`,
    run: async (c: Coordinator) => {
      const leaderId = (await c.readLeases())[a.sh]!.leaderId ?? "none";
      const adopted = await c.adoptHandOver(a.sh, a.e, claimOf(a.s, a.ms, a.lock * 100, a.valid * 50, leaderId), { namespaces: a.ns, block: 10 });
      return adopted === null ? null : { ...adopted, bounds: [...adopted.bounds].sort((x, y) => (x.namespace < y.namespace ? -1 : 1)) };
    },
  })),
  fc.constant({ name: "read-leases", run: (c: Coordinator) => c.readLeases() }),
  fc.constant({ name: "read-members", run: async (c: Coordinator) => (await c.readMembers(60_000, 10)).map(({ heartbeatAgeMs: _, ...m }) => m) }),
  fc.constant({ name: "read-standby-candidates", run: (c: Coordinator) => c.readStandbyCandidates(60_000) }),
  namespace.map((ns) => ({ name: `read-bound ${ns}`, run: (c: Coordinator) => c.readBound(ns) })),
);

describe("the in-memory store answers every coordinator statement as PostgreSQL does", () => {
  it("random statement sequences get the same answers from both", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 20, maxLength: 60 }), async (ops) => {
        const schema = await createTestSchema();
        const pg = createPostgresCoordinator({ connectionString: schema.connectionString });
        const memory = createMemoryCoordinator({ store: new MemoryStore({ now: () => Date.now() }) });
        try {
          expect(await memory.start(SHARDS)).toBe(await pg.start(SHARDS));
          for (const o of ops) {
            const [want, got] = [await o.run(pg).catch((e: Error) => `error ${e.name}`), await o.run(memory).catch((e: Error) => `error ${e.name}`)];
            expect({ op: o.name, answer: got }).toEqual({ op: o.name, answer: want });
          }
          expect(await memory.readLeases()).toEqual(await pg.readLeases());
        } finally {
          await pg.close();
          await schema.drop();
        }
      }),
      { numRuns: 12 },
    );
  }, 120_000);
});

describe("a balance hand-over, step by step, on both", () => {
  it("names the former leader the new epoch's in-sync standby, and the taker's adoption keeps it named (only the adopt-clears-former break's statement clears it)", async () => {
    const schema = await createTestSchema();
    const pg = createPostgresCoordinator({ connectionString: schema.connectionString });
    const memory = createMemoryCoordinator({ store: new MemoryStore({ now: () => Date.now() }) });
    const rows: unknown[][] = [[], []];
    try {
      for (const [i, c] of [pg, memory].entries()) {
        await c.start(SHARDS);
        for (const s of ["s0", "s1"]) await c.heartbeat({ serverId: s, incarnation: `${s}-inc`, url: `http://${s}.invalid`, ready: true }, 60_000);
        const got = await c.acquire(0, (await c.readLeases())[0]!.version, claimOf("s0", 60_000, 1_000, 1_000));
        expect(got?.epoch).toBe(1);
        expect(await c.nameStandby(termOf("s0", 0, 1), { serverId: "s1", incarnation: "s1-inc" }, 1)).toBe(true);
        expect(await c.setInSync(termOf("s0", 0, 1), "s1-inc", true, 2)).toBe(true);
        expect(await c.handOver(termOf("s0", 0, 1), { serverId: "s1", incarnation: "s1-inc" }, 60_000, true)).toEqual({ shard: 0, epoch: 2, url: "http://s1.invalid" });
        const moved = (await c.readLeases())[0]!;
        expect(moved).toMatchObject({ holder: "s1", incarnation: "s1-inc", leaderId: "s0-term", epoch: 2, standbyId: "s0", standbyIncarnation: "s0-inc", inSync: true });
        rows[i]!.push(moved);
        expect((await c.adoptHandOver(0, 2, claimOf("s1", 60_000, 1_000, 1_000, "s0-term")))?.standby).toEqual({ serverId: "s0", incarnation: "s0-inc" });
        const adopted = (await c.readLeases())[0]!;
        expect(adopted).toMatchObject({ holder: "s1", epoch: 2, standbyId: "s0", standbyIncarnation: "s0-inc", inSync: true });
        rows[i]!.push(adopted);
        // The taker moves that standby to s2 (ShardReplication.moveStandby): fenced by its term and
        // by the row naming either standby in sync; a retry after an unknown outcome matches too.
        const s1Term = termOf("s1", 0, 2);
        const [s0, s2] = [{ serverId: "s0", incarnation: "s0-inc" }, { serverId: "s2", incarnation: "s2-inc" }];
        expect(await c.moveStandby({ ...s1Term, incarnation: "s1-other" }, s0, s2, 1)).toBe(false);
        expect(await c.moveStandby(s1Term, { serverId: "s3", incarnation: "s3-inc" }, s2, 1)).toBe(false);
        expect(await c.moveStandby(s1Term, s0, s2, 1)).toBe(true);
        expect(await c.moveStandby(s1Term, s0, s2, 1)).toBe(false);
        expect(await c.moveStandby(s1Term, s0, s2, 2)).toBe(true);
        const movedStandby = (await c.readLeases())[0]!;
        expect(movedStandby).toMatchObject({ holder: "s1", epoch: 2, standbyId: "s2", standbyIncarnation: "s2-inc", inSync: true });
        rows[i]!.push(movedStandby);
        // Not in sync (a later round): nothing is named in sync by a move any more.
        expect(await c.setInSync(s1Term, "s2-inc", false, 3)).toBe(true);
        expect(await c.moveStandby(s1Term, s0, s2, 4)).toBe(false);
        expect(await c.setInSync(s1Term, "s2-inc", true, 5)).toBe(true);
        // TEST ONLY (adopt-clears-former): the same adoption with the break's flag clears the standby fields.
        expect((await c.adoptHandOver(0, 2, claimOf("s1", 60_000, 1_000, 1_000, "s0-term"), undefined, true))?.standby).toBeNull();
        const cleared = (await c.readLeases())[0]!;
        expect(cleared).toMatchObject({ holder: "s1", epoch: 2, standbyId: null, standbyIncarnation: null, inSync: false });
        rows[i]!.push(cleared);
      }
      const strip = (r: unknown): unknown => ({ ...(r as Record<string, unknown>), version: undefined });
      expect(rows[1]!.map(strip)).toEqual(rows[0]!.map(strip));
    } finally {
      await pg.close();
      await schema.drop();
    }
  });
});
