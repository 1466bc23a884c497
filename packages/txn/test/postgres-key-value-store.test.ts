import { afterEach, describe, expect, it } from "vitest";
import pg from "pg";
import { PostgresKeyValueStore, type KeyValueStore } from "../src/index.js";
import { openStore, PG_URL, STORE_KINDS, type OpenedStore } from "./support/stores.js";

const cell = (row: string, column = "c") => ({ row, column });

describe.each(STORE_KINDS)("KeyValueStore contract (%s)", (kind) => {
  const opened: OpenedStore[] = [];
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((o) => o.close()));
  });
  async function fresh(): Promise<KeyValueStore> {
    const o = await openStore(kind);
    opened.push(o);
    return o.store;
  }

  it("latestBefore answers the newest version strictly below the bound, and a put at a timestamp overwrites it", async () => {
    const store = await fresh();
    expect(await store.latestBefore("t", cell("k"), 100)).toBeUndefined();
    await store.put("t", cell("k"), 10, "a");
    await store.put("t", cell("k"), 30, "c");
    await store.put("t", cell("k"), 20, null);
    await store.put("t", cell("other"), 25, "x");
    expect(await store.latestBefore("t", cell("k"), 10)).toBeUndefined();
    expect(await store.latestBefore("t", cell("k"), 11)).toEqual({ timestamp: 10, value: "a" });
    expect(await store.latestBefore("t", cell("k"), 30)).toEqual({ timestamp: 20, value: null });
    expect(await store.latestBefore("t", cell("k"), Number.POSITIVE_INFINITY)).toEqual({ timestamp: 30, value: "c" });
    await store.put("t", cell("k"), 30, "c2");
    expect(await store.versions("t", cell("k"))).toEqual([
      { timestamp: 10, value: "a" },
      { timestamp: 20, value: null },
      { timestamp: 30, value: "c2" },
    ]);
    // Tables and columns are separate keyspaces.
    expect(await store.latestBefore("u", cell("k"), 100)).toBeUndefined();
    expect(await store.latestBefore("t", cell("k", "d"), 100)).toBeUndefined();
  });

  it("putUnlessExists: of 50 concurrent writers of one cell exactly one wins, and its value stays", async () => {
    const store = await fresh();
    const wins = await Promise.all(Array.from({ length: 50 }, (_, i) => store.putUnlessExists("_tx", cell("7", "t"), `v${i}`)));
    expect(wins.filter(Boolean)).toHaveLength(1);
    const winner = wins.indexOf(true);
    expect(await store.getUnversioned("_tx", cell("7", "t"))).toBe(`v${winner}`);
    expect(await store.putUnlessExists("_tx", cell("7", "t"), "late")).toBe(false);
    expect(await store.getUnversioned("_tx", cell("8", "t"))).toBeUndefined();
  });

  it("cells lists cells with versions; deleteVersions removes exactly the named ones", async () => {
    const store = await fresh();
    await store.put("t", cell("a"), 1, "1");
    await store.put("t", cell("a"), 2, "2");
    await store.put("t", cell("b", "x"), 3, "3");
    await store.put("u", cell("c"), 4, "4");
    const cells = await store.cells("t");
    expect(cells.map((c) => `${c.row}/${c.column}`).sort()).toEqual(["a/c", "b/x"]);
    await store.deleteVersions("t", cell("a"), [1, 99]);
    expect(await store.versions("t", cell("a"))).toEqual([{ timestamp: 2, value: "2" }]);
    await store.deleteVersions("t", cell("b", "x"), [3]);
    expect((await store.cells("t")).map((c) => c.row)).toEqual(["a"]);
    await store.deleteVersions("t", cell("a"), []);
    expect(await store.versions("t", cell("a"))).toHaveLength(1);
  });

  it("keeps rows, columns and values that are not plain ASCII", async () => {
    const store = await fresh();
    const odd = { row: "ро́w 🚀 'quote\"", column: "col;DROP TABLE x" };
    await store.put("t", odd, 5, "välue ☃");
    expect(await store.latestBefore("t", odd, 6)).toEqual({ timestamp: 5, value: "välue ☃" });
  });
});

describe("PostgresKeyValueStore", () => {
  const opened: OpenedStore[] = [];
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((o) => o.close()));
  });

  it("creates its schema and tables on first use, and a second store on the same schema sees the data", async () => {
    const o = await openStore("postgres");
    opened.push(o);
    const store = o.store as PostgresKeyValueStore;
    const admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    try {
      const before = await admin.query("SELECT 1 FROM information_schema.schemata WHERE schema_name = $1", [store.schema]);
      expect(before.rowCount).toBe(0);
      await store.put("t", cell("k"), 1, "v");
      const tables = await admin.query<{ table_name: string }>("SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY 1", [store.schema]);
      expect(tables.rows.map((r) => r.table_name)).toEqual(["unversioned", "versions"]);
    } finally {
      await admin.end();
    }
    const second = new PostgresKeyValueStore({ connectionString: PG_URL, schema: store.schema });
    try {
      expect(await second.latestBefore("t", cell("k"), 2)).toEqual({ timestamp: 1, value: "v" });
    } finally {
      await second.close();
    }
  });

  it("refuses a schema name that is not a plain identifier, and text PostgreSQL cannot store", async () => {
    expect(() => new PostgresKeyValueStore({ connectionString: PG_URL, schema: 'x"; DROP SCHEMA public; --' })).toThrow(/plain identifier/);
    expect(() => new PostgresKeyValueStore({})).toThrow(/connectionString or a pool/);
    const o = await openStore("postgres");
    opened.push(o);
    await expect(o.store.put("t", cell("a\u0000b"), 1, "v")).rejects.toThrow(/row contains U\+0000/);
    await expect(o.store.putUnlessExists("t", cell("a"), "v\u0000")).rejects.toThrow(/value contains U\+0000/);
  });
});
