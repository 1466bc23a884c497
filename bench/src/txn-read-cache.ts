import { randomBytes } from "node:crypto";
import { LockClient } from "@leasehold/client";
import { PostgresKeyValueStore, TransactionError, TransactionManager } from "@leasehold/txn";
import pg from "pg";
import { PG_URL } from "./bench-cluster.js";
import { silentLogger } from "./silent-logger.js";

const TABLE = "hot";
const ROWS = 1_000;
const WORKERS = 64;
const READS_PER_TXN = 4;

/** One mode's run of the read-heavy workload. */
export interface ReadHeavyRun {
  readonly committed: number;
  readonly seconds: number;
  /** Latency of every `txn.get`, in microseconds. */
  readonly readsUs: number[];
  readonly hits: number;
  readonly misses: number;
}

/**
 * Read-heavy transactions over PostgreSQL: 64 workers, each transaction reading 4 random rows of a
 * hot set of 1,000; 90% of transactions only read, 10% also write one of the rows they read
 * (`retry-on-write-write`, so every write takes its row's commit lock: the event that invalidates
 * cached copies). Runs `mode` for `ms` after a warm-up long enough for the cache to leave its cold
 * period (a lease of the 2 s lease server: 1 s).
 */
export async function readHeavy(url: string, store: PostgresKeyValueStore, cached: boolean, ms: number, warmUpMs: number): Promise<ReadHeavyRun> {
  const client = LockClient.http({ baseUrl: url, namespace: "bench-read-heavy", logger: silentLogger() });
  const manager = new TransactionManager({
    client,
    store,
    tables: { [TABLE]: "retry-on-write-write" },
    retries: 20,
    ...(cached ? { readCache: { prefixes: [TABLE] } } : {}),
  });
  try {
    const phase = async (durationMs: number, readsUs: number[] | null): Promise<number> => {
      let committed = 0;
      const end = performance.now() + durationMs;
      await Promise.all(
        Array.from({ length: WORKERS }, async () => {
          while (performance.now() < end) {
            const writes = Math.random() < 0.1;
            try {
              await manager.run(async (txn) => {
                let last = "";
                for (let i = 0; i < READS_PER_TXN; i++) {
                  const row = `r${Math.floor(Math.random() * ROWS)}`;
                  const t0 = performance.now();
                  await txn.get(TABLE, row, "v");
                  readsUs?.push((performance.now() - t0) * 1000);
                  last = row;
                }
                if (writes) txn.put(TABLE, last, "v", String(txn.startTimestamp));
              });
              committed++;
            } catch (err) {
              if (!(err instanceof TransactionError)) throw err;
            }
          }
        }),
      );
      return committed;
    };
    await phase(warmUpMs, null);
    const before = manager.readCacheStats() ?? { hits: 0, misses: 0 };
    const readsUs: number[] = [];
    const t0 = performance.now();
    const committed = await phase(ms, readsUs);
    const seconds = (performance.now() - t0) / 1000;
    const after = manager.readCacheStats() ?? { hits: 0, misses: 0 };
    return { committed, seconds, readsUs, hits: after.hits - before.hits, misses: after.misses - before.misses };
  } finally {
    manager.close();
    await client.close();
  }
}

/** A PostgreSQL store in a schema of its own with the hot set written, and how to drop it. */
export async function hotSetStore(url: string): Promise<{ store: PostgresKeyValueStore; drop(): Promise<void> }> {
  const schema = `lh_bench_txn_${randomBytes(5).toString("hex")}`;
  const store = new PostgresKeyValueStore({ connectionString: PG_URL, schema, poolSize: 16 });
  const client = LockClient.http({ baseUrl: url, namespace: "bench-read-heavy", logger: silentLogger() });
  const manager = new TransactionManager({ client, store, tables: { [TABLE]: "retry-on-write-write" } });
  for (let start = 0; start < ROWS; start += 100) {
    await manager.run((txn) => {
      for (let i = start; i < start + 100; i++) txn.put(TABLE, `r${i}`, "v", "initial");
    });
  }
  await client.close();
  return {
    store,
    async drop() {
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
