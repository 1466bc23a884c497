import { describe, expect, it } from "vitest";
import type { Coordinator, LeaseClaim } from "../../src/cluster/coordinator.js";
import { ShardCountMismatchError } from "../../src/cluster/coordinator.js";
import type { CoordinatorEvent } from "../../src/cluster/postgres/coordinator-event.js";
import { createPostgresCoordinator } from "../../src/cluster/postgres/postgres-coordinator.js";
import { placeSchema, SCHEMA_COLUMNS } from "../../src/cluster/postgres/postgres-schema.js";
import { schemaPerTest } from "./pg-schema.js";

const claim = (serverId: string, leaderLeaseMs = 60_000): LeaseClaim => ({
  serverId,
  incarnation: `${serverId}-incarnation`,
  url: `http://${serverId}.invalid`,
  leaderId: `${serverId}-term`,
  leaderLeaseMs,
  lockLeaseMs: 1_400,
  validForMs: 700,
});

describe("PostgresCoordinator", () => {
  const bed = schemaPerTest<Coordinator>();
  const open = bed.open;
  const coordinator = (): Coordinator => {
    const c = createPostgresCoordinator({ connectionString: bed.schema.connectionString });
    open.push(c);
    return c;
  };

  it("creates its tables idempotently in the schema the connection string names, one lease row per shard", async () => {
    expect(await coordinator().start(8)).toBe(8);
    expect(await coordinator().start(undefined)).toBe(8);
    expect(await coordinator().start(8)).toBe(8);
    const leases = await coordinator().readLeases();
    expect(leases.map((l) => l.shard)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(leases.every((l) => l.holder === null && l.epoch === 0 && l.expired)).toBe(true);
    const tables = await bed.schema.query<{ table_name: string }>("SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY 1", [bed.schema.name]);
    expect(tables.map((t) => t.table_name)).toEqual(["bounds", "cluster_config", "cluster_key", "leases", "members"]);
  });

  it("the columns the start-up check requires are exactly those the DDL creates", async () => {
    await coordinator().start(2);
    const rows = await bed.schema.query<{ table_name: string; column_name: string }>("SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = $1", [bed.schema.name]);
    const created: Record<string, string[]> = {};
    for (const r of rows) (created[r.table_name] ??= []).push(r.column_name);
    const sorted = (o: Readonly<Record<string, readonly string[]>>): Record<string, string[]> => Object.fromEntries(Object.entries(o).map(([t, c]) => [t, [...c].sort()]).sort());
    expect(sorted(created)).toEqual(sorted(SCHEMA_COLUMNS));
  });

  it("starts with a role that may only read and write the tables an owner created: no DDL once the schema is complete", async () => {
    await coordinator().start(4);
    const role = `lh_dml_${bed.schema.name.slice(-12)}`;
    await bed.schema.query(`CREATE ROLE ${role} LOGIN`);
    try {
      await bed.schema.query(`GRANT USAGE ON SCHEMA ${bed.schema.name} TO ${role}`);
      await bed.schema.query(`GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA ${bed.schema.name} TO ${role}`);
      const url = new URL(bed.schema.connectionString);
      url.username = role;
      const limited = createPostgresCoordinator({ connectionString: url.toString() });
      open.push(limited);
      expect(await limited.start(4)).toBe(4);
      expect(await limited.heartbeat({ serverId: "dml", incarnation: "dml-incarnation", url: "http://dml", ready: true }, 5_000)).toEqual([{ serverId: "dml", incarnation: "dml-incarnation", ready: true, url: "http://dml" }]);
      // The role really has no DDL rights: on a schema missing a column it is refused.
      await bed.schema.query("ALTER TABLE members DROP COLUMN ready");
      const again = createPostgresCoordinator({ connectionString: url.toString() });
      open.push(again);
      const err = await again.start(4).catch((e: unknown) => e);
      expect((err as { code?: string }).code).toBe("42501");
    } finally {
      await Promise.all(open.splice(0).map((c) => c.close()));
      await bed.schema.query(`DROP OWNED BY ${role}`);
      await bed.schema.query(`DROP ROLE ${role}`);
    }
  });

  it("adds a column a later version needs to tables an older version created", async () => {
    await coordinator().start(4);
    await bed.schema.query("ALTER TABLE members DROP COLUMN ready");
    await bed.schema.query("INSERT INTO members (server_id, url, heartbeat_at) VALUES ('old', 'http://old', clock_timestamp())");
    expect(await coordinator().start(4)).toBe(4);
    // Rows of the older version's servers count as ready, as they did before.
    expect(await bed.schema.query("SELECT server_id, ready FROM members")).toEqual([{ server_id: "old", ready: true }]);
  });

  it("refuses a different shard count later with a clear error", async () => {
    await coordinator().start(8);
    const err = await coordinator().start(16).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ShardCountMismatchError);
    expect((err as Error).message).toMatch(/--shards 16 does not match this cluster, which was created with 8 shards/);
  });

  it("two coordinators racing for one shard: exactly one wins, with epoch 1", async () => {
    const a = coordinator();
    const b = coordinator();
    await a.start(4);
    await b.start(4);
    for (let round = 0; round < 5; round++) {
      const shard = round % 4;
      const seen = (await a.readLeases())[shard]!;
      const results = await Promise.all([a.acquire(shard, seen.version, claim("a")), b.acquire(shard, seen.version, claim("b"))]);
      const winners = results.filter((r) => r !== null);
      expect(winners).toHaveLength(1);
      expect(winners[0]!.epoch).toBe(seen.epoch + 1);
      const after = (await a.readLeases())[shard]!;
      expect(after.holder === "a" ? results[0] : results[1]).not.toBeNull();
      expect(after.expired).toBe(false);
      // Release it again so the next round races on a free row of a later epoch.
      await a.release(after.holder!, [{ shard, epoch: after.epoch }]);
    }
  });

  it("never takes a live lease, and takes an expired one only at the version it saw", async () => {
    const a = coordinator();
    await a.start(2);
    const first = await a.acquire(0, 0, claim("a", 150));
    expect(first).toEqual({ shard: 0, epoch: 1, lockDelayMs: 0 });
    const live = (await a.readLeases())[0]!;
    expect(await a.acquire(0, live.version, claim("b"))).toBeNull();
    await new Promise((r) => setTimeout(r, 250));
    const stale = (await a.readLeases())[0]!;
    expect(stale.expired).toBe(true);
    expect(await a.acquire(0, stale.version - 1, claim("b"))).toBeNull();
    const taken = await a.acquire(0, stale.version, claim("b"));
    // The new leader waits out the longest validForMs the earlier leader answered (not its lock lease, 1,400).
    expect(taken).toEqual({ shard: 0, epoch: 2, lockDelayMs: 700 });
  });

  it("renews all of a server's shards in one statement, and a renewal after expiry matches nothing", async () => {
    const a = coordinator();
    await a.start(4);
    await a.acquire(0, 0, claim("a", 60_000));
    // Long enough to be alive at the first renewal, which opens the renewal connections first.
    await a.acquire(1, 0, claim("a", 5_000));
    await a.acquire(2, 0, claim("b", 60_000));
    expect((await a.renew("a", [{ shard: 0, epoch: 1 }, { shard: 1, epoch: 1 }], 60_000)).sort()).toEqual([0, 1]);
    // Wrong epoch or another holder's shard: not renewed.
    expect(await a.renew("a", [{ shard: 0, epoch: 2 }, { shard: 2, epoch: 1 }], 60_000)).toEqual([]);
    await a.acquire(3, 0, claim("a", 100));
    await new Promise((r) => setTimeout(r, 200));
    expect(await a.renew("a", [{ shard: 0, epoch: 1 }, { shard: 3, epoch: 1 }], 60_000)).toEqual([0]);
  });

  it("fences bound extensions by epoch: a deposed leader's extension matches nothing", async () => {
    const a = coordinator();
    await a.start(2);
    const old = (await a.acquire(0, 0, claim("a", 100)))!;
    expect(await a.extendBound("ns", old, 0, 1000, 1)).toBe(true);
    expect(await a.readBound("ns")).toEqual({ bound: 1000, immutable: 1, epoch: 1 });
    // A stale compare value matches nothing.
    expect(await a.extendBound("ns", old, 0, 2000)).toBe(false);
    await new Promise((r) => setTimeout(r, 150));
    const seen = (await a.readLeases())[0]!;
    const next = (await a.acquire(0, seen.version, claim("b")))!;
    expect(next.epoch).toBe(2);
    expect(await a.extendBound("ns", old, 1000, 2000)).toBe(false);
    expect((await a.readBound("ns")).bound).toBe(1000);
    expect(await a.extendBound("ns", next, 1000, 3000, 1001)).toBe(true);
    // The lowest recorded immutable timestamp is kept by an extension.
    expect(await a.readBound("ns")).toEqual({ bound: 3000, immutable: 1, epoch: 2 });
    expect(await a.recordImmutable([{ namespace: "ns", term: old, immutable: 5 }])).toEqual([]);
    expect(await a.recordImmutable([{ namespace: "ns", term: next, immutable: 2500 }])).toEqual(["ns"]);
    expect((await a.readBound("ns")).immutable).toBe(2500);
  });

  it("test mode: reports each acquisition and bound extension that took effect, with the database time of its statement, and nothing else", async () => {
    const events: CoordinatorEvent[] = [];
    const a = createPostgresCoordinator({ connectionString: bed.schema.connectionString, onCommitted: (e) => events.push(e) });
    open.push(a);
    await a.start(2);
    const before = (await bed.schema.query<{ us: string }>("SELECT (extract(epoch FROM clock_timestamp()) * 1000000)::bigint AS us"))[0]!.us;
    const old = (await a.acquire(0, 0, claim("a", 100)))!;
    expect(await a.acquire(0, 0, claim("b"))).toBeNull();
    expect(await a.extendBound("ns", old, 0, 1000, 1)).toBe(true);
    expect(await a.extendBound("ns", old, 1000, 2000)).toBe(true);
    expect(await a.extendBound("ns", old, 1000, 3000)).toBe(false);
    await new Promise((r) => setTimeout(r, 150));
    const next = (await a.acquire(0, (await a.readLeases())[0]!.version, claim("b")))!;
    expect(await a.extendBound("ns", old, 2000, 3000)).toBe(false);
    expect(events.map((e) => (e.kind === "acquisition" ? `${e.kind} ${e.shard}/${e.epoch}` : `${e.kind} ${e.namespace} ${e.shard}/${e.epoch} ${e.from}→${e.to}`))).toEqual([
      "acquisition 0/1",
      "bound extension ns 0/1 0→1000",
      "bound extension ns 0/1 1000→2000",
      `acquisition 0/${next.epoch}`,
    ]);
    const times = events.map((e) => e.dbTimeUs);
    expect(times[0]).toBeGreaterThanOrEqual(Number(before));
    // One database clock: the statements' times are in the order they ran, in microseconds.
    expect([...times].sort((x, y) => x - y)).toEqual(times);
    expect(times[3]! - times[0]!).toBeGreaterThanOrEqual(150_000);
  });

  it("release notifies watchers at once; heartbeats answer the live members", async () => {
    const a = coordinator();
    const b = coordinator();
    await a.start(2);
    const released: number[] = [];
    let heardRelease = (): void => undefined;
    const heard = new Promise<void>((resolve) => (heardRelease = resolve));
    await b.watch(
      (shard) => {
        released.push(shard);
        heardRelease();
      },
      () => undefined,
    );
    const term = (await a.acquire(1, 0, claim("a")))!;
    await a.release("a", [term]);
    await heard;
    expect(released).toEqual([1]);
    expect((await a.readLeases())[1]!.holder).toBeNull();
    expect(await a.heartbeat({ serverId: "a", incarnation: "a-incarnation", url: "http://a", ready: true }, 5_000)).toEqual([{ serverId: "a", incarnation: "a-incarnation", ready: true, url: "http://a" }]);
    // A joiner's heartbeat says it does not take shards yet; the others see that.
    expect(await b.heartbeat({ serverId: "b", incarnation: "b-incarnation", url: "http://b", ready: false }, 5_000)).toEqual([
      { serverId: "a", incarnation: "a-incarnation", ready: true, url: "http://a" },
      { serverId: "b", incarnation: "b-incarnation", ready: false, url: "http://b" },
    ]);
    expect(await a.heartbeat({ serverId: "a", incarnation: "a-incarnation", url: "http://a", ready: true }, 5_000)).toEqual([
      { serverId: "a", incarnation: "a-incarnation", ready: true, url: "http://a" },
      { serverId: "b", incarnation: "b-incarnation", ready: false, url: "http://b" },
    ]);
    expect(await b.heartbeat({ serverId: "b", incarnation: "b-incarnation", url: "http://b", ready: true }, 5_000)).toEqual([
      { serverId: "a", incarnation: "a-incarnation", ready: true, url: "http://a" },
      { serverId: "b", incarnation: "b-incarnation", ready: true, url: "http://b" },
    ]);
    await a.leave({ serverId: "a", incarnation: "a-incarnation" });
    expect(await b.heartbeat({ serverId: "b", incarnation: "b-incarnation", url: "http://b", ready: true }, 5_000)).toEqual([{ serverId: "b", incarnation: "b-incarnation", ready: true, url: "http://b" }]);
  });

  it("imports a bound without ever lowering one, and refuses while the shard has a live leader", async () => {
    const a = coordinator();
    await a.start(2);
    expect(await a.importBound("ns", 500, 0)).toBe(true);
    expect(await a.importBound("ns", 200, 0)).toBe(true);
    expect((await a.readBound("ns")).bound).toBe(500);
    await a.acquire(0, 0, claim("a", 150));
    expect(await a.importBound("ns", 900, 0)).toBe(false);
    expect(await a.importBound("other", 900, 0)).toBe(false);
    expect(await a.readBound("ns")).toEqual({ bound: 500, immutable: null, epoch: 0 });
    expect((await a.readBound("other")).bound).toBe(0);
    // Another shard's leader does not matter; an expired lease does not either.
    expect(await a.importBound("third", 900, 1)).toBe(true);
    await new Promise((r) => setTimeout(r, 250));
    expect(await a.importBound("ns", 900, 0)).toBe(true);
    expect((await a.readBound("ns")).bound).toBe(900);
  });

  it("puts tables in schema leasehold unless the connection string's options set a search_path", () => {
    expect(placeSchema("postgres://u@h/db")).toEqual({ schema: "leasehold", options: "-c search_path=leasehold" });
    expect(placeSchema("postgres://u@h/db?options=-c%20search_path%3Dmine").schema).toBe("mine");
  });
});
