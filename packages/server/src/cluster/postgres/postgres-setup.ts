import type pg from "pg";
import { DEFAULT_SHARDS, ShardCountMismatchError } from "../coordinator.js";
import { newClusterKey } from "../replication/cluster-key.js";
import { CREATE_TABLES, quoteIdentifier, SCHEMA_COMPLETE } from "./postgres-schema.js";

/** Advisory lock key ("lhst") that serialises the set-up of servers starting together. */
const SETUP_LOCK_KEY = 0x6c_68_73_74;

/**
 * The cluster's set-up, in one transaction on `client` (a connection of its own, already open):
 * under the set-up lock, the schema and its tables are created when any is missing (DDL only
 * then, so a role that may only use the tables starts too), the shard count is stored by the first
 * server and checked by every later one, a lease row is made for every shard and the cluster key
 * created once. Answers the cluster's shard count. Throws a {@link ShardCountMismatchError} when
 * `shards` is given and differs from the stored count; any failure rolls the transaction back.
 */
export async function setUpSchema(client: pg.Client, schema: string, shards: number | undefined): Promise<number> {
  try {
    await client.query("BEGIN");
    await client.query("SELECT pg_advisory_xact_lock($1)", [SETUP_LOCK_KEY]);
    const complete = (await client.query<{ complete: boolean }>(SCHEMA_COMPLETE, [schema])).rows[0]?.complete === true;
    if (!complete) await client.query(`CREATE SCHEMA IF NOT EXISTS ${quoteIdentifier(schema)}`);
    await client.query(`SET LOCAL search_path = ${quoteIdentifier(schema)}`);
    if (!complete) await client.query(CREATE_TABLES);
    await client.query("INSERT INTO cluster_config (id, shards) VALUES (1, $1) ON CONFLICT (id) DO NOTHING", [shards ?? DEFAULT_SHARDS]);
    const stored = (await client.query<{ shards: number }>("SELECT shards FROM cluster_config WHERE id = 1")).rows[0]?.shards ?? DEFAULT_SHARDS;
    if (shards !== undefined && stored !== shards) throw new ShardCountMismatchError(stored, shards);
    await client.query("INSERT INTO leases (shard) SELECT generate_series(0, $1::int - 1) ON CONFLICT (shard) DO NOTHING", [stored]);
    await client.query("INSERT INTO cluster_key (id, key) VALUES (1, $1) ON CONFLICT (id) DO NOTHING", [newClusterKey()]);
    await client.query("COMMIT");
    return stored;
  } catch (err) {
    await client.query("ROLLBACK").catch(() => undefined);
    throw err;
  }
}
