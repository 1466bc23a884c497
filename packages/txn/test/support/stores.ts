import { randomBytes } from "node:crypto";
import pg from "pg";
import { InMemoryKeyValueStore, PostgresKeyValueStore, type KeyValueStore } from "../../src/index.js";

/** The test database (CI and the dev machine: trust auth, user postgres, database `test`). */
export const PG_URL = process.env.LEASEHOLD_TEST_PG ?? "postgres://postgres@127.0.0.1:5432/test";

/** A store for one test and how to get rid of it (a PostgreSQL one drops its schema). */
export interface OpenedStore<S extends KeyValueStore = KeyValueStore> {
  readonly store: S;
  close(): Promise<void>;
}

/** Which store a suite runs over. */
export type StoreKind = "memory" | "postgres";

/** Every store the transaction suites run against. */
export const STORE_KINDS: readonly StoreKind[] = ["memory", "postgres"];

/** A fresh empty store of `kind`; a PostgreSQL one lives in a schema of its own, dropped by `close`. */
export async function openStore(kind: StoreKind): Promise<OpenedStore> {
  if (kind === "memory") return { store: new InMemoryKeyValueStore(), close: async () => undefined };
  return openPostgresStore();
}

/** A {@link PostgresKeyValueStore} in a new uniquely named schema; `close` ends it and drops the schema. */
export async function openPostgresStore(): Promise<OpenedStore<PostgresKeyValueStore>> {
  const schema = `lh_txn_test_${randomBytes(6).toString("hex")}`;
  const store = new PostgresKeyValueStore({ connectionString: PG_URL, schema, poolSize: 8 });
  return {
    store,
    async close() {
      await store.close();
      const admin = new pg.Client({ connectionString: PG_URL });
      await admin.connect();
      try {
        await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      } finally {
        await admin.end();
      }
    },
  };
}

/** Keeps every store a suite opened, to close them all after it. */
export class StoreList {
  readonly #open: OpenedStore[] = [];

  constructor(private readonly kind: StoreKind) {}

  async open(): Promise<KeyValueStore> {
    const opened = await openStore(this.kind);
    this.#open.push(opened);
    return opened.store;
  }

  async closeAll(): Promise<void> {
    await Promise.all(this.#open.splice(0).map((o) => o.close()));
  }
}
