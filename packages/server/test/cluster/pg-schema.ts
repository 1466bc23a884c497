import { randomBytes } from "node:crypto";
import pg from "pg";
import { afterEach, beforeEach } from "vitest";

/** The test database (CI and the dev machine: trust auth, user postgres, database `test`). */
export const PG_URL = process.env.LEASEHOLD_TEST_PG ?? "postgres://postgres@127.0.0.1:5432/test";

/** A schema of its own for one test, and a connection string whose search_path points at it. */
export interface TestSchema {
  readonly name: string;
  readonly connectionString: string;
  /** Run SQL in the schema (for assertions and for simulating faults). */
  query<R extends pg.QueryResultRow>(text: string, values?: unknown[]): Promise<R[]>;
  /** Drop the schema and everything in it. */
  drop(): Promise<void>;
}

/** Create a uniquely named schema; the caller drops it. */
export async function createTestSchema(): Promise<TestSchema> {
  const name = `lh_test_${randomBytes(6).toString("hex")}`;
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${name}`);
  await admin.query(`SET search_path = ${name}`);
  const connectionString = `${PG_URL}?options=${encodeURIComponent(`-c search_path=${name}`)}`;
  return {
    name,
    connectionString,
    query: async (text, values) => (await admin.query(text, values)).rows,
    async drop() {
      try {
        await admin.query(`DROP SCHEMA ${name} CASCADE`);
      } finally {
        await admin.end();
      }
    },
  };
}

/** Something a test opens in its schema (a server, a coordinator): closed before the schema is dropped. */
export interface Closable {
  close(): Promise<unknown>;
}

/**
 * For the tests of the calling `describe`: a schema of its own before each test; after it, every
 * thing pushed to `open` is closed, then the schema is dropped.
 */
export function schemaPerTest<T extends Closable>(): { readonly schema: TestSchema; readonly open: T[] } {
  let current: TestSchema | undefined;
  const open: T[] = [];
  beforeEach(async () => {
    current = await createTestSchema();
  });
  afterEach(async () => {
    await Promise.all(open.splice(0).map((c) => c.close()));
    await current?.drop();
    current = undefined;
  });
  return {
    get schema(): TestSchema {
      if (current === undefined) throw new Error("schemaPerTest: the schema exists only while a test runs");
      return current;
    },
    open,
  };
}
