import { userInfo } from "node:os";
import pg from "pg";
import { nowNs } from "../stats.js";
import type { PeerDriver } from "./peer.js";

/** The PostgreSQL the peer benchmarks use. */
export const POSTGRES = { host: "127.0.0.1", port: 5432, database: "test" } as const;

/** First key of `pg_advisory_lock(int, int)`: keeps the benchmark's locks apart from others'. */
const ADVISORY_CLASS = 0x1ea5;

/** The lock table of the row-lock peer: one row per lock name, as the seed systems keep them. */
const TABLE = "leasehold_bench_lock";

/** Both PostgreSQL peers over one pool, and the pool to close when the suite ends. */
export interface PostgresPeers {
  readonly user: string;
  readonly advisory: PeerDriver;
  /** Undefined when the lock table could not be created; `rowSkip` says why. */
  readonly row?: PeerDriver | undefined;
  readonly rowSkip?: string | undefined;
  close(): Promise<void>;
}

async function connect(poolSize: number): Promise<{ pool: pg.Pool; user: string }> {
  const errors: string[] = [];
  for (const user of [...new Set(["postgres", userInfo().username])]) {
    // 10 s to connect, not 2: on the shared 2-core machine under load, 64 connections opened at
    // once during the warm-up took longer than 2 s and the PostgreSQL peers were skipped whole.
    const pool = new pg.Pool({ ...POSTGRES, user, max: poolSize, connectionTimeoutMillis: 10_000 });
    pool.on("error", () => undefined); // an idle client's error; the next query reports it
    try {
      await pool.query("SELECT 1");
      return { pool, user };
    } catch (err) {
      errors.push(`${user}: ${(err as Error).message}`);
      await pool.end().catch(() => undefined);
    }
  }
  throw new Error(errors.join("; "));
}

/**
 * Open a pool of `poolSize` connections (one per caller) as `postgres`, or else as the current
 * user, and return the two PostgreSQL peers. Throws when neither user can connect.
 *
 * - Advisory locks: a pooled connection, `pg_advisory_lock(class, key)` then
 *   `pg_advisory_unlock(class, key)`: two round-trips. The blocking form, not `pg_try_`, because
 *   it waits in PostgreSQL's own lock queue as leasehold's `lock` waits in its own; the try form
 *   would need a polling loop, which costs round-trips under contention and is not how one locks
 *   a key one must have.
 * - Row locks: `BEGIN`, `SELECT id FROM leasehold_bench_lock WHERE id = $1 FOR UPDATE`, `COMMIT`:
 *   three round-trips, the lock lasting as long as the transaction, as in the seed systems.
 */
export async function openPostgresPeers(poolSize: number, keys: readonly number[]): Promise<PostgresPeers> {
  const { pool, user } = await connect(poolSize);
  const advisory: PeerDriver = {
    name: "pg_advisory",
    async session() {
      return {
        async pair(key) {
          const client = await pool.connect();
          try {
            await client.query("SELECT pg_advisory_lock($1, $2)", [ADVISORY_CLASS, key]);
            const granted = nowNs();
            await client.query("SELECT pg_advisory_unlock($1, $2)", [ADVISORY_CLASS, key]);
            return granted;
          } finally {
            client.release();
          }
        },
        async end() {},
      };
    },
  };
  let row: PeerDriver | undefined;
  let rowSkip: string | undefined;
  try {
    await pool.query(`CREATE TABLE IF NOT EXISTS ${TABLE} (id integer PRIMARY KEY)`);
    await pool.query(`INSERT INTO ${TABLE} (id) SELECT unnest($1::int[]) ON CONFLICT DO NOTHING`, [keys]);
    row = {
      name: "pg_row",
      async session() {
        return {
          async pair(key) {
            const client = await pool.connect();
            try {
              await client.query("BEGIN");
              const res = await client.query(`SELECT id FROM ${TABLE} WHERE id = $1 FOR UPDATE`, [key]);
              const granted = nowNs();
              if (res.rowCount !== 1) throw new Error(`pg_row: no lock row ${key}`);
              await client.query("COMMIT");
              return granted;
            } catch (err) {
              await client.query("ROLLBACK").catch(() => undefined);
              throw err;
            } finally {
              client.release();
            }
          },
          async end() {},
        };
      },
    };
  } catch (err) {
    rowSkip = `lock table ${TABLE} could not be created: ${(err as Error).message}`;
  }
  return {
    user,
    advisory,
    ...(row ? { row } : {}),
    ...(rowSkip ? { rowSkip } : {}),
    async close() {
      await pool.end();
    },
  };
}
