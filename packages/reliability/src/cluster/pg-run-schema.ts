import { randomBytes } from "node:crypto";
import pg from "pg";

/** The PostgreSQL the suite uses (CI and the dev machine: trust auth, user postgres, database `test`). */
export const PG_URL = process.env.LEASEHOLD_TEST_PG ?? "postgres://postgres@127.0.0.1:5432/test";

/** One run's own schema, and an admin connection for assertions and faults. */
export interface RunSchema {
  readonly name: string;
  /**
   * A connection string for one server: to PostgreSQL through `port` (its fault proxy), with the
   * run's schema as search path (docs/cluster.md: the `options` parameter places the tables) and
   * `applicationName`, so its sessions can be found in `pg_stat_activity`.
   */
  connectionString(port: number, applicationName: string): string;
  /** `pg_terminate_backend` every session whose `application_name` is `applicationName`; answers how many. */
  terminate(applicationName: string): Promise<number>;
  /** Run `sql` (with `params`) on the admin connection, in the run's schema (`search_path` set); answers the rows. */
  query<Row extends Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<Row[]>;
  /** Drop the schema and everything in it, and close the admin connection. */
  drop(): Promise<void>;
}

/** Create a uniquely named schema (`lh_rel_<hex>`) for one run; the caller drops it. */
export async function createRunSchema(): Promise<RunSchema> {
  const name = `lh_rel_${randomBytes(6).toString("hex")}`;
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${name}`);
  const base = new URL(PG_URL);
  return {
    name,
    connectionString(port, applicationName) {
      const url = new URL(base);
      url.hostname = "127.0.0.1";
      url.port = String(port);
      // The connection string's application_name wins over node-postgres' config field.
      url.search = `?options=${encodeURIComponent(`-c search_path=${name}`)}&application_name=${encodeURIComponent(applicationName)}`;
      return url.toString();
    },
    async terminate(applicationName) {
      const rows = await admin.query<{ ok: boolean }>(
        "SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity WHERE application_name = $1 AND pid <> pg_backend_pid()",
        [applicationName],
      );
      return rows.rows.filter((r) => r.ok).length;
    },
    async query<Row extends Record<string, unknown>>(sql: string, params: readonly unknown[] = []) {
      await admin.query(`SET search_path TO ${name}`);
      return (await admin.query<Row>(sql, [...params])).rows;
    },
    async drop() {
      try {
        await admin.query(`DROP SCHEMA ${name} CASCADE`);
      } finally {
        await admin.end();
      }
    },
  };
}
