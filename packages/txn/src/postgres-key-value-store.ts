import type pg from "pg";
import type { Cell, KeyValueStore, Version } from "./key-value-store.js";

/** Options of {@link PostgresKeyValueStore}. */
export interface PostgresKeyValueStoreOptions {
  /**
   * Where to connect (a node-postgres connection string). Required unless `pool` is given; the
   * store then owns its pool and {@link PostgresKeyValueStore.close} ends it.
   */
  readonly connectionString?: string | undefined;
  /**
   * A pool to use instead of making one. Default: none. The store never ends a pool it was given:
   * its owner may share it.
   */
  readonly pool?: pg.Pool | undefined;
  /**
   * The schema the store's two tables live in, created with them on first use. Default
   * `"leasehold_txn"`: apart from the lock server's own `leasehold` schema, so both can share a
   * database. A plain identifier (`[a-z_][a-z0-9_]*`, at most 63 characters) so it is never
   * mistaken for SQL.
   */
  readonly schema?: string | undefined;
  /**
   * Connections of a pool the store makes itself. Default 10 (node-postgres' own default): each
   * read or write is one statement, so a few connections carry many concurrent transactions.
   */
  readonly poolSize?: number | undefined;
}

const SCHEMA_PATTERN = /^[a-z_][a-z0-9_]{0,62}$/;

/**
 * A {@link KeyValueStore} over PostgreSQL (node-postgres). Every version of every cell is a row
 * of `versions (tbl, row_key, col, ts, value)`, whose primary key ends in `ts`, so
 * `latestBefore` is one backward index probe; a delete is a row whose `value` is NULL. The
 * transactions table and other unversioned cells are rows of `unversioned`, written by
 * `INSERT … ON CONFLICT DO NOTHING`, which PostgreSQL makes atomic: of concurrent writers of one
 * cell exactly one inserts (the transactions table's commit point relies on that). Nothing needs
 * a database transaction of its own: every method is one statement.
 *
 * The schema and both tables are created on first use (`CREATE … IF NOT EXISTS`). PostgreSQL
 * `text` cannot hold U+0000, so rows, columns and values containing it are refused with a
 * `TypeError` instead of failing inside the database.
 */
export class PostgresKeyValueStore implements KeyValueStore {
  /** The pool once there is one: given, or made on first use (see {@link PostgresKeyValueStore.#create}). */
  #pool: pg.Pool | null;
  readonly #makePool: (() => Promise<pg.Pool>) | null;
  readonly #schema: string;
  readonly #q: { readonly versions: string; readonly unversioned: string };
  #ready: Promise<void> | null = null;
  #closed = false;

  constructor(options: PostgresKeyValueStoreOptions) {
    const schema = options.schema ?? "leasehold_txn";
    if (!SCHEMA_PATTERN.test(schema)) {
      throw new RangeError(`schema must be a plain identifier ([a-z_][a-z0-9_]*, at most 63 characters); got ${JSON.stringify(schema)}`);
    }
    if (options.pool === undefined && options.connectionString === undefined) {
      throw new TypeError("PostgresKeyValueStore needs a connectionString or a pool");
    }
    this.#schema = schema;
    this.#pool = options.pool ?? null;
    // node-postgres is loaded when the store first needs a pool of its own, not when @leasehold/txn
    // is: a program (or an ES module bundle of one) that never uses this store never loads it.
    const config = { connectionString: options.connectionString, max: options.poolSize ?? 10 };
    this.#makePool = options.pool === undefined ? async () => new (await import("pg")).default.Pool(config) : null;
    this.#q = { versions: `"${schema}".versions`, unversioned: `"${schema}".unversioned` };
  }

  /** The schema the tables live in. */
  get schema(): string {
    return this.#schema;
  }

  async latestBefore(table: string, cell: Cell, before: number): Promise<Version | undefined> {
    await this.#ensure();
    // `before` is +Infinity for "the newest of all" (the write-write check): no bound then.
    const bounded = Number.isFinite(before);
    const { rows } = await this.#db.query<{ ts: string; value: string | null }>(
      `SELECT ts, value FROM ${this.#q.versions} WHERE tbl = $1 AND row_key = $2 AND col = $3${bounded ? " AND ts < $4" : ""} ORDER BY ts DESC LIMIT 1`,
      bounded ? [table, cell.row, cell.column, before] : [table, cell.row, cell.column],
    );
    const row = rows[0];
    return row === undefined ? undefined : { timestamp: Number(row.ts), value: row.value };
  }

  async put(table: string, cell: Cell, timestamp: number, value: string | null): Promise<void> {
    checkText(table, cell, value);
    await this.#ensure();
    await this.#db.query(
      `INSERT INTO ${this.#q.versions} (tbl, row_key, col, ts, value) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (tbl, row_key, col, ts) DO UPDATE SET value = EXCLUDED.value`,
      [table, cell.row, cell.column, timestamp, value],
    );
  }

  async putUnlessExists(table: string, cell: Cell, value: string): Promise<boolean> {
    checkText(table, cell, value);
    await this.#ensure();
    const result = await this.#db.query(
      `INSERT INTO ${this.#q.unversioned} (tbl, row_key, col, value) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING`,
      [table, cell.row, cell.column, value],
    );
    return result.rowCount === 1;
  }

  async getUnversioned(table: string, cell: Cell): Promise<string | undefined> {
    await this.#ensure();
    const { rows } = await this.#db.query<{ value: string }>(
      `SELECT value FROM ${this.#q.unversioned} WHERE tbl = $1 AND row_key = $2 AND col = $3`,
      [table, cell.row, cell.column],
    );
    return rows[0]?.value;
  }

  async cells(table: string): Promise<Cell[]> {
    await this.#ensure();
    const { rows } = await this.#db.query<{ row_key: string; col: string }>(
      `SELECT DISTINCT row_key, col FROM ${this.#q.versions} WHERE tbl = $1`,
      [table],
    );
    return rows.map((r) => ({ row: r.row_key, column: r.col }));
  }

  async versions(table: string, cell: Cell): Promise<Version[]> {
    await this.#ensure();
    const { rows } = await this.#db.query<{ ts: string; value: string | null }>(
      `SELECT ts, value FROM ${this.#q.versions} WHERE tbl = $1 AND row_key = $2 AND col = $3 ORDER BY ts ASC`,
      [table, cell.row, cell.column],
    );
    return rows.map((r) => ({ timestamp: Number(r.ts), value: r.value }));
  }

  async deleteVersions(table: string, cell: Cell, timestamps: readonly number[]): Promise<void> {
    if (timestamps.length === 0) return;
    await this.#ensure();
    await this.#db.query(
      `DELETE FROM ${this.#q.versions} WHERE tbl = $1 AND row_key = $2 AND col = $3 AND ts = ANY($4::bigint[])`,
      [table, cell.row, cell.column, timestamps.map(String)],
    );
  }

  /** End the pool if the store made it; a pool it was given is left to its owner. */
  async close(): Promise<void> {
    this.#closed = true;
    const pool = this.#pool;
    if (this.#makePool === null || pool === null) return;
    // A first use still connecting finishes before the pool ends.
    await this.#ready?.catch(() => undefined);
    await pool.end();
  }

  /** The pool; only called after {@link PostgresKeyValueStore.#ensure} resolved. */
  get #db(): pg.Pool {
    return this.#pool as pg.Pool;
  }

  /** Create the schema and tables once per store; a failure is retried by the next call. */
  #ensure(): Promise<void> {
    if (this.#closed) return Promise.reject(new Error("this PostgresKeyValueStore is closed"));
    if (this.#ready === null) {
      this.#ready = this.#create().catch((err: unknown) => {
        this.#ready = null;
        throw err;
      });
    }
    return this.#ready;
  }

  async #create(): Promise<void> {
    if (this.#pool === null) this.#pool = await (this.#makePool as () => Promise<pg.Pool>)();
    const client = await this.#pool.connect();
    try {
      await client.query("BEGIN");
      // Stores starting together in several processes would race on CREATE … IF NOT EXISTS (it is
      // not atomic in PostgreSQL): a transaction-scoped advisory lock on the schema's name
      // serialises them. It only guards this setup.
      await client.query("SELECT pg_advisory_xact_lock(hashtext($1))", [`leasehold_txn:${this.#schema}`]);
      await client.query(`CREATE SCHEMA IF NOT EXISTS "${this.#schema}"`);
      await client.query(
        `CREATE TABLE IF NOT EXISTS ${this.#q.versions} (
           tbl text NOT NULL, row_key text NOT NULL, col text NOT NULL, ts bigint NOT NULL, value text,
           PRIMARY KEY (tbl, row_key, col, ts))`,
      );
      await client.query(
        `CREATE TABLE IF NOT EXISTS ${this.#q.unversioned} (
           tbl text NOT NULL, row_key text NOT NULL, col text NOT NULL, value text NOT NULL,
           PRIMARY KEY (tbl, row_key, col))`,
      );
      await client.query("COMMIT");
    } catch (err) {
      await client.query("ROLLBACK").catch(() => undefined);
      throw err;
    } finally {
      client.release();
    }
  }
}

function checkText(table: string, cell: Cell, value: string | null): void {
  for (const [what, text] of [["table", table], ["row", cell.row], ["column", cell.column], ["value", value]] as const) {
    if (text !== null && text.includes("\u0000")) {
      throw new TypeError(`${what} contains U+0000, which PostgreSQL text cannot store`);
    }
  }
}
