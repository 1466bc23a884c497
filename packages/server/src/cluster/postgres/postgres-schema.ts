/**
 * Where the cluster's tables live and how they are created. At every start, inside one transaction
 * holding a transaction-scoped advisory lock (so servers starting together never race on `CREATE
 * TABLE`), the server checks whether every table and column is there ({@link SCHEMA_COMPLETE}) and
 * runs the DDL only when something is missing (DESIGN.md: "tables are created on first start").
 * So a server whose role may only read and write the tables starts on a schema an owner created,
 * and a restart takes no `ACCESS EXCLUSIVE` lock. The advisory lock only serialises this setup;
 * leadership never depends on advisory locks (ADR 0008).
 */

/** Schema used when the connection string's `options` set no `search_path`. */
export const DEFAULT_SCHEMA = "leasehold";

/** Where the tables go and how each session finds them. */
export interface SchemaPlacement {
  /** The schema the tables are created in (created too when missing). */
  readonly schema: string;
  /**
   * `options` to pass to every connection (`-c search_path=…`), or undefined when the connection
   * string's own `options` already set the search path (theirs must win, so ours is not sent).
   */
  readonly options: string | undefined;
}

/**
 * Decide the schema from a connection string: the first entry of a `search_path` set in its
 * `options` parameter (`postgres://…/db?options=-c%20search_path%3Dmy_schema`), else
 * {@link DEFAULT_SCHEMA}. Only the URL form of connection strings can carry `options` here.
 */
export function placeSchema(connectionString: string): SchemaPlacement {
  let options: string | null = null;
  try {
    options = new URL(connectionString).searchParams.get("options");
  } catch {
    // Not a URL (a key=value string): no options to honour, the default schema is used.
  }
  const match = options === null ? null : /search_path\s*=\s*("?)([^\s,"]+)\1/.exec(options);
  if (match !== null && match[2] !== undefined) return { schema: match[2], options: undefined };
  return { schema: DEFAULT_SCHEMA, options: `-c search_path=${DEFAULT_SCHEMA}` };
}

/** Quote an SQL identifier. */
export function quoteIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/**
 * Every table of {@link CREATE_TABLES} with every column it creates, which is every column a server
 * uses. A column added by a later version goes here too, so that an older schema gets its `ALTER`
 * (a test checks that this matches what the DDL creates).
 */
export const SCHEMA_COLUMNS: Readonly<Record<string, readonly string[]>> = {
  cluster_config: ["id", "shards", "created_at"],
  members: ["server_id", "url", "heartbeat_at", "ready", "incarnation"],
  leases: [
    "shard", "holder", "url", "leader_id", "epoch", "version", "expires_at", "transitions", "lock_lease_ms", "incarnation",
    "valid_for_ms", "valid_for_epoch", "standby_id", "standby_incarnation", "in_sync", "sync_round",
  ],
  bounds: ["namespace", "bound", "immutable", "epoch"],
  cluster_key: ["id", "key"],
};

/**
 * One row, `complete`: true when schema `$1` holds every table of {@link SCHEMA_COLUMNS} with all
 * its columns (the catalog answers only for tables the role may use, which is what matters).
 */
export const SCHEMA_COMPLETE = `
SELECT count(*) = ${Object.keys(SCHEMA_COLUMNS).length} AS complete FROM (
  SELECT table_name, array_agg(column_name::text) AS columns FROM information_schema.columns
  WHERE table_schema = $1 GROUP BY table_name
) t
WHERE ${Object.entries(SCHEMA_COLUMNS)
  .map(([table, columns]) => `(table_name = '${table}' AND columns @> ARRAY[${columns.map((c) => `'${c}'`).join(", ")}])`)
  .join("\n   OR ")}
`;

/**
 * The DDL, run with the search path pointing at the schema, only when {@link SCHEMA_COMPLETE}
 * found something missing. Columns:
 * - `cluster_config`: one row, the shard count chosen when the cluster was first created.
 * - `members`: one row per live server with its heartbeat on the database clock and whether it
 *   takes shards now (`ready`: false during its join wait; added by `ALTER` for tables created by
 *   an older version, whose servers, not sending it, count as ready as they did before), and the
 *   `incarnation` of the process writing it (a random id per process start; `NULL` in rows of an
 *   older version), so a second live process with the same server id cannot take the row over.
 * - `leases`: one row per shard: holder, URL, leader id of the term, `epoch` (+1 per acquisition),
 *   `version` (+1 per write, what "seen unchanged" compares), expiry on the database clock,
 *   transition count, the longest lock lease any leader of the shard declared (`lock_lease_ms`,
 *   kept for servers of versions before `valid_for_ms`, which wait it out), the holder's
 *   `incarnation` (a process releases only rows it acquired itself), and the lease-wait record:
 *   `valid_for_ms`, the longest `validForMs` answered by a leader of the shard whose leases a
 *   client may still believe, complete for every term up to `valid_for_epoch` (a term of an older
 *   version, which does not write it, leaves `valid_for_epoch` behind `epoch`: its successor then
 *   also waits out `lock_lease_ms`; docs/cluster.md "Lease-wait");
 *   its standby (`standby_id`, `standby_incarnation`), whether that standby holds every grant
 *   answered (`in_sync`), and the `sync_round` of the last standby write (each such write of a
 *   term carries a higher round and matches only a lower stored one, so an earlier write whose
 *   answer was lost can never land after a later one). Every acquisition, hand-over and release
 *   clears these four.
 * - `cluster_key`: one row, the 256-bit key members sign server-to-server requests with, written
 *   by the first server to start (cluster/replication/cluster-key.ts). No role but the members'
 *   should be granted `SELECT` on it (`PUBLIC` has no rights on it).
 *
 * Columns added after the first release are added by `ALTER TABLE … ADD COLUMN IF NOT EXISTS`, so
 * tables created by an older version are migrated in place (additive, nullable: no rewrite).
 * - `bounds`: one row per namespace: the durable timestamp bound, the epoch that last extended it,
 *   and the last recorded immutable timestamp.
 */
export const CREATE_TABLES = `
CREATE TABLE IF NOT EXISTS cluster_config (
  id int PRIMARY KEY CHECK (id = 1),
  shards int NOT NULL CHECK (shards >= 1),
  created_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE TABLE IF NOT EXISTS members (
  server_id text PRIMARY KEY,
  url text NOT NULL,
  heartbeat_at timestamptz NOT NULL
);
ALTER TABLE members ADD COLUMN IF NOT EXISTS ready boolean NOT NULL DEFAULT true;
ALTER TABLE members ADD COLUMN IF NOT EXISTS incarnation text;
CREATE TABLE IF NOT EXISTS leases (
  shard int PRIMARY KEY,
  holder text,
  url text,
  leader_id text,
  epoch bigint NOT NULL DEFAULT 0,
  version bigint NOT NULL DEFAULT 0,
  expires_at timestamptz NOT NULL DEFAULT '-infinity',
  transitions bigint NOT NULL DEFAULT 0,
  lock_lease_ms int NOT NULL DEFAULT 0
);
ALTER TABLE leases ADD COLUMN IF NOT EXISTS incarnation text;
ALTER TABLE leases ADD COLUMN IF NOT EXISTS valid_for_ms int NOT NULL DEFAULT 0;
ALTER TABLE leases ADD COLUMN IF NOT EXISTS valid_for_epoch bigint;
ALTER TABLE leases ADD COLUMN IF NOT EXISTS standby_id text;
ALTER TABLE leases ADD COLUMN IF NOT EXISTS standby_incarnation text;
ALTER TABLE leases ADD COLUMN IF NOT EXISTS in_sync boolean NOT NULL DEFAULT false;
ALTER TABLE leases ADD COLUMN IF NOT EXISTS sync_round bigint NOT NULL DEFAULT 0;
CREATE TABLE IF NOT EXISTS bounds (
  namespace text PRIMARY KEY,
  bound bigint NOT NULL CHECK (bound >= 0),
  immutable bigint,
  epoch bigint NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS cluster_key (
  id int PRIMARY KEY CHECK (id = 1),
  key bytea NOT NULL CHECK (octet_length(key) = 32)
);
REVOKE ALL ON cluster_key FROM PUBLIC;
`;
