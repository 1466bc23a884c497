import { fnv1a32 } from "@leasehold/protocol";
import pg from "pg";
import {
  type AcquiredTerm,
  type Coordinator,
  type HeldTerm,
  type ImmutableRecord,
  type LeaseClaim,
  type LiveMember,
  type MemberRow,
  type ShardLease,
  type StoredBound,
} from "../coordinator.js";
import { checkConnectionString } from "./connection-string.js";
import type { CoordinatorEvent } from "./coordinator-event.js";
import { boundLoadStatements } from "./postgres-bound-load.js";
import { placeSchema, quoteIdentifier } from "./postgres-schema.js";
import { setUpSchema } from "./postgres-setup.js";
import { standbyStatements } from "./postgres-standby-statements.js";
import { CLEAR_STANDBY, DB_TIME_US } from "./sql-fragments.js";

/** Options of {@link createPostgresCoordinator}. */
export interface PostgresCoordinatorOptions {
  /** node-postgres connection string (`postgres://user@host:5432/db`, optionally `?options=-c search_path=…`). */
  readonly connectionString: string;
  /**
   * Longest a statement may take before its promise rejects (its outcome then unknown). Default
   * 1,000 ms: a renewal is due every third of the leader lease, and a hung statement must not hold
   * up the next one. Give about a third of `--leader-lease-ms`.
   */
  readonly statementTimeoutMs?: number | undefined;
  /**
   * Hears every statement: its name, how long it took in seconds and whether it succeeded (for the
   * coordinator latency metric). Default: nothing.
   */
  readonly onStatement?: ((name: string, seconds: number, ok: boolean) => void) | undefined;
  /** TEST ONLY (`LEASEHOLD_TEST_BREAK=epoch-fence`, see test-breaks.ts): bound extensions without the epoch condition. Default false. */
  readonly unfencedBoundExtensions?: boolean | undefined;
  /**
   * Size of the statement pool (passes, acquisitions, bound loads and extensions). Default 4: the
   * runtime runs at most a few statements at once. Renewals and heartbeats never use it: they have
   * two connections of their own, so a burst of bound loads never holds a renewal back.
   */
  readonly poolSize?: number | undefined;
  /**
   * TEST ONLY (the server sets it at `--log-level debug`): hears every shard acquisition and bound
   * extension that took effect, with the database's `clock_timestamp()` of its statement, so the
   * reliability suite can check that no extension of an epoch landed after a newer epoch of its
   * shard was acquired (both stamped by the one database clock). Both statements are rare (a
   * takeover; one extension per half reservation block), so the extra column costs nothing on the
   * hot path. Default: nothing.
   */
  readonly onCommitted?: ((event: CoordinatorEvent) => void) | undefined;
}

/**
 * The {@link Coordinator} over PostgreSQL (node-postgres). One pool for statements, two connections
 * of their own for renewals and heartbeats (a renewal never waits for a free connection behind
 * request-driven bound loads: the serving gate counts from when it was sent), one dedicated
 * connection for `LISTEN`. Leadership is rows, never advisory locks (ADR 0008): a row carries an
 * epoch and an expiry on the database clock, and works behind PgBouncer.
 */
export function createPostgresCoordinator(options: PostgresCoordinatorOptions): Coordinator {
  checkConnectionString(options.connectionString);
  const placement = placeSchema(options.connectionString);
  const timeout = options.statementTimeoutMs ?? 1_000;
  const config: pg.PoolConfig = {
    connectionString: options.connectionString,
    max: options.poolSize ?? 4,
    query_timeout: timeout,
    connectionTimeoutMillis: Math.max(timeout, 1_000),
    idleTimeoutMillis: 30_000,
    allowExitOnIdle: true,
    application_name: "leasehold-server",
    ...(placement.options === undefined ? {} : { options: placement.options }),
  };
  const pool = new pg.Pool(config);
  // Renewals and heartbeats: one connection each when both run at once. Kept open between them
  // (a renewal every third of the leader lease), so a renewal does not pay a new connection either.
  const leasePool = new pg.Pool({ ...config, max: 2 });
  // An idle connection that breaks (the database restarted) must not crash the process: the next
  // statement gets a fresh connection.
  pool.on("error", () => undefined);
  leasePool.on("error", () => undefined);
  const channel = `leasehold_released_${fnv1a32(placement.schema).toString(16)}`;
  const onStatement = options.onStatement;
  const onCommitted = options.onCommitted;
  let listener: pg.Client | null = null;
  /** Set-up connections in flight (a join attempt against a slow database): ended by `close()`. */
  const setups = new Set<pg.Client>();
  let closed = false;

  async function run<R extends pg.QueryResultRow>(name: string, text: string, values: unknown[] = [], on: pg.Pool = pool): Promise<R[]> {
    const started = performance.now();
    try {
      const result = await on.query<R>(text, values);
      onStatement?.(name, (performance.now() - started) / 1000, true);
      return result.rows;
    } catch (err) {
      onStatement?.(name, (performance.now() - started) / 1000, false);
      throw err;
    }
  }

  const termArrays = (terms: readonly HeldTerm[]): [number[], string[]] => [terms.map((t) => t.shard), terms.map((t) => String(t.epoch))];

  return {
    ...standbyStatements(run, channel, onCommitted),
    ...boundLoadStatements(run, options.unfencedBoundExtensions === true, onCommitted),

    async start(shards) {
      // Its own connection with a generous timeout: servers starting together queue on the setup lock.
      if (closed) throw new Error("the coordinator is closed");
      const client = new pg.Client({ ...config, query_timeout: Math.max(30_000, timeout) });
      client.on("error", () => undefined);
      setups.add(client);
      try {
        await client.connect();
      } catch (err) {
        setups.delete(client);
        await client.end().catch(() => undefined);
        throw err;
      }
      try {
        return await setUpSchema(client, placement.schema, shards);
      } finally {
        setups.delete(client);
        await client.end().catch(() => undefined);
      }
    },

    async heartbeat(member, withinMs) {
      // The upsert and the read are one statement; the CTE's own write is not visible to the read,
      // so this member is added to the answer from the CTE.
      // The row is taken over only from this incarnation, from a row without one (an older
      // version's) or from one whose heartbeat lapsed: a second live process with the same server
      // id writes nothing and is missing from the answer (the ON CONFLICT row lock orders two
      // processes starting together: the second sees the first's fresh row).
      const rows = await run<{ server_id: string; ready: boolean; incarnation: string | null; url: string }>(
        "heartbeat",
        `WITH hb AS (
           INSERT INTO members (server_id, url, heartbeat_at, ready, incarnation) VALUES ($1, $2, clock_timestamp(), $4, $5)
           ON CONFLICT (server_id) DO UPDATE SET url = EXCLUDED.url, heartbeat_at = EXCLUDED.heartbeat_at, ready = EXCLUDED.ready, incarnation = EXCLUDED.incarnation
           WHERE members.incarnation IS NULL OR members.incarnation = EXCLUDED.incarnation
              OR members.heartbeat_at <= clock_timestamp() - make_interval(secs => $3::float8 / 1000)
           RETURNING server_id, ready, incarnation, url)
         SELECT server_id, ready, incarnation, url FROM members WHERE heartbeat_at > clock_timestamp() - make_interval(secs => $3::float8 / 1000) AND server_id <> $1
         UNION ALL SELECT server_id, ready, incarnation, url FROM hb`,
        [member.serverId, member.url, withinMs, member.ready, member.incarnation],
        leasePool,
      );
      return rows.map((r): LiveMember => ({ serverId: r.server_id, ready: r.ready, incarnation: r.incarnation, url: r.url })).sort((x, y) => (x.serverId < y.serverId ? -1 : x.serverId > y.serverId ? 1 : 0));
    },

    async leave(member) {
      await run("leave", "DELETE FROM members WHERE server_id = $1 AND incarnation IS NOT DISTINCT FROM $2", [member.serverId, member.incarnation]);
    },

    async readMembers(withinMs, limit) {
      const rows = await run<{ server_id: string; url: string; ready: boolean; age_ms: number }>(
        "read-members",
        `SELECT server_id, url, ready, GREATEST(0, floor(extract(epoch FROM clock_timestamp() - heartbeat_at) * 1000))::float8 AS age_ms
         FROM members WHERE heartbeat_at > clock_timestamp() - make_interval(secs => $1::float8 / 1000) ORDER BY server_id LIMIT $2`,
        [withinMs, limit],
      );
      return rows.map((r): MemberRow => ({ serverId: r.server_id, url: r.url, ready: r.ready, heartbeatAgeMs: r.age_ms }));
    },

    async readLeases() {
      const rows = await run<{
        shard: number;
        holder: string | null;
        url: string | null;
        leader_id: string | null;
        incarnation: string | null;
        epoch: string;
        version: string;
        expired: boolean;
        transitions: string;
        standby_id: string | null;
        standby_incarnation: string | null;
        in_sync: boolean;
      }>(
        "read-leases",
        `SELECT shard, holder, url, leader_id, incarnation, epoch, version, transitions, (holder IS NULL OR expires_at <= clock_timestamp()) AS expired,
           standby_id, standby_incarnation, in_sync
         FROM leases ORDER BY shard`,
      );
      return rows.map(
        (r): ShardLease => ({
          shard: r.shard,
          holder: r.holder,
          url: r.url,
          leaderId: r.leader_id,
          incarnation: r.incarnation,
          epoch: Number(r.epoch),
          version: Number(r.version),
          expired: r.expired,
          transitions: Number(r.transitions),
          standbyId: r.standby_id,
          standbyIncarnation: r.standby_incarnation,
          inSync: r.in_sync,
        }),
      );
    },

    async acquire(shard, seen, claim: LeaseClaim) {
      // The wait: the record, when complete up to the previous term (valid_for_epoch = epoch);
      // else a term of an older version came since, which recorded only its lock lease. The
      // record then takes this term's own validForMs on top (GREATEST: an earlier leader's leases
      // may still be believed until this term has waited them out; see settleLeaseWait).
      const rows = await run<{ epoch: string; wait_ms: number; db_time_us: string }>(
        "acquire",
        `UPDATE leases l SET holder = $2, url = $3, leader_id = $4, incarnation = $8, epoch = l.epoch + 1, version = l.version + 1,
           transitions = l.transitions + 1, expires_at = clock_timestamp() + make_interval(secs => $5::float8 / 1000),
           lock_lease_ms = GREATEST(l.lock_lease_ms, $6), valid_for_ms = GREATEST(p.wait_ms, $9), valid_for_epoch = l.epoch + 1,
           ${CLEAR_STANDBY}
         FROM (SELECT shard, CASE WHEN valid_for_epoch = epoch THEN valid_for_ms ELSE GREATEST(valid_for_ms, lock_lease_ms) END AS wait_ms
               FROM leases WHERE shard = $1) p
         WHERE l.shard = p.shard AND l.version = $7 AND (l.holder IS NULL OR l.expires_at <= clock_timestamp())
           AND (NOT $10 OR (l.leader_id = $4 AND l.standby_id = $2 AND l.standby_incarnation = $8 AND l.in_sync))
         RETURNING l.epoch, p.wait_ms, ${DB_TIME_US}`,
        [shard, claim.serverId, claim.url, claim.leaderId, claim.leaderLeaseMs, Math.ceil(claim.lockLeaseMs), seen, claim.incarnation, Math.ceil(claim.validForMs), claim.withState === true],
      );
      const row = rows[0];
      if (row !== undefined) onCommitted?.({ kind: "acquisition", shard, epoch: Number(row.epoch), dbTimeUs: Number(row.db_time_us) });
      return row === undefined ? null : ({ shard, epoch: Number(row.epoch), lockDelayMs: row.wait_ms } satisfies AcquiredTerm);
    },

    async settleLeaseWait(term, validForMs) {
      const rows = await run<{ shard: number }>(
        "settle-lease-wait",
        `UPDATE leases SET valid_for_ms = $3 WHERE shard = $1 AND epoch = $2 AND valid_for_epoch = $2 RETURNING shard`,
        [term.shard, term.epoch, Math.ceil(validForMs)],
      );
      return rows.length > 0;
    },

    async renew(serverId, terms, leaderLeaseMs) {
      if (terms.length === 0) return [];
      const [shards, epochs] = termArrays(terms);
      const rows = await run<{ shard: number }>(
        "renew",
        `UPDATE leases SET expires_at = clock_timestamp() + make_interval(secs => $4::float8 / 1000), version = version + 1
         WHERE holder = $1 AND expires_at > clock_timestamp()
           AND (shard, epoch) IN (SELECT * FROM unnest($2::int[], $3::bigint[]))
         RETURNING shard`,
        [serverId, shards, epochs, leaderLeaseMs],
        leasePool,
      );
      return rows.map((r) => r.shard);
    },

    async release(serverId, terms) {
      if (terms.length === 0) return;
      const [shards, epochs] = termArrays(terms);
      await run(
        "release",
        `WITH r AS (
           UPDATE leases SET holder = NULL, url = NULL, leader_id = NULL, incarnation = NULL, expires_at = '-infinity', version = version + 1, ${CLEAR_STANDBY}
           WHERE holder = $1 AND (shard, epoch) IN (SELECT * FROM unnest($2::int[], $3::bigint[]))
           RETURNING shard)
         SELECT pg_notify($4, shard::text) FROM r`,
        [serverId, shards, epochs, channel],
      );
    },

    async readBound(namespace) {
      const rows = await run<{ bound: string; immutable: string | null; epoch: string }>(
        "read-bound",
        "SELECT bound, immutable, epoch FROM bounds WHERE namespace = $1",
        [namespace],
      );
      const row = rows[0];
      if (row === undefined) return { bound: 0, immutable: null, epoch: 0 } satisfies StoredBound;
      return { bound: Number(row.bound), immutable: row.immutable === null ? null : Number(row.immutable), epoch: Number(row.epoch) };
    },

    async extendBound(namespace, term, from, to, immutable) {
      // FOR SHARE on the lease row: a takeover committing meanwhile makes this re-check the row and
      // match nothing, and a takeover arriving later waits until this extension is visible to it.
      const epoch = options.unfencedBoundExtensions === true ? "$3::bigint IS NOT NULL" : "epoch = $3";
      const fence = `SELECT 1 FROM leases WHERE shard = $2 AND ${epoch} AND holder IS NOT NULL AND expires_at > clock_timestamp() FOR SHARE`;
      const values = [namespace, term.shard, String(term.epoch), String(from), String(to), immutable === undefined ? null : String(immutable)];
      const rows =
        from === 0
          ? await run<{ db_time_us: string }>(
              "extend-bound",
              `INSERT INTO bounds (namespace, bound, immutable, epoch) SELECT $1, $5, $6, $3 FROM (${fence}) l WHERE $4::bigint = 0 ON CONFLICT (namespace) DO NOTHING RETURNING bound, ${DB_TIME_US}`,
              values,
            )
          : await run<{ db_time_us: string }>(
              "extend-bound",
              `UPDATE bounds b SET bound = $5, epoch = $3, immutable = LEAST(b.immutable, $6::bigint)
               FROM (${fence}) l WHERE b.namespace = $1 AND b.bound = $4 RETURNING b.bound, ${DB_TIME_US}`,
              values,
            );
      const row = rows[0];
      if (rows.length === 1 && row !== undefined) {
        onCommitted?.({ kind: "bound extension", namespace, shard: term.shard, epoch: term.epoch, from, to, dbTimeUs: Number(row.db_time_us) });
      }
      return rows.length === 1;
    },

    async recordImmutable(entries: readonly ImmutableRecord[]) {
      if (entries.length === 0) return [];
      const rows = await run<{ namespace: string }>(
        "record-immutable",
        `UPDATE bounds b SET immutable = v.imm
         FROM (SELECT v.ns, v.imm FROM unnest($1::text[], $2::bigint[], $3::int[], $4::bigint[]) AS v(ns, imm, shard, epoch)
               JOIN leases l ON l.shard = v.shard AND l.epoch = v.epoch AND l.holder IS NOT NULL AND l.expires_at > clock_timestamp()
               FOR SHARE OF l) v
         WHERE b.namespace = v.ns RETURNING b.namespace`,
        [entries.map((e) => e.namespace), entries.map((e) => String(e.immutable)), entries.map((e) => e.term.shard), entries.map((e) => String(e.term.epoch))],
      );
      return rows.map((r) => r.namespace);
    },

    async importBound(namespace, bound, shard) {
      // FOR SHARE of the shard's lease row while it has no live leader: an acquisition committing
      // meanwhile makes this re-check the row and refuse; one arriving later waits for the import,
      // and its term then reads the imported bound.
      const rows = await run(
        "import-bound",
        `INSERT INTO bounds (namespace, bound, epoch)
         SELECT $1, $2, 0 FROM (SELECT 1 FROM leases WHERE shard = $3 AND (holder IS NULL OR expires_at <= clock_timestamp()) FOR SHARE) l
         ON CONFLICT (namespace) DO UPDATE SET bound = GREATEST(bounds.bound, EXCLUDED.bound)
         RETURNING namespace`,
        [namespace, String(bound), shard],
      );
      return rows.length === 1;
    },

    async watch(onReleased, onLost) {
      const client = new pg.Client({ ...config, query_timeout: undefined });
      // Until LISTEN succeeds, failures reach the caller as this call's rejection only, so one
      // failed attempt never schedules two reconnections.
      client.on("error", () => undefined);
      client.on("notification", (msg) => {
        if (msg.channel !== channel) return;
        const shard = Number(msg.payload);
        if (Number.isInteger(shard)) onReleased(shard);
      });
      try {
        await client.connect();
        await client.query(`LISTEN ${quoteIdentifier(channel)}`);
      } catch (err) {
        await client.end().catch(() => undefined);
        throw err;
      }
      let reported = false;
      const lost = (err: Error): void => {
        // A replaced or closed listener ending is expected, not a loss.
        if (reported || closed || listener !== client) return;
        reported = true;
        listener = null;
        client.end().catch(() => undefined);
        onLost(err);
      };
      client.on("error", lost);
      client.on("end", () => lost(new Error("the LISTEN connection ended")));
      const previous = listener;
      listener = client;
      if (previous !== null) await previous.end().catch(() => undefined);
      if (closed) await client.end().catch(() => undefined);
    },

    async close() {
      closed = true;
      const l = listener;
      listener = null;
      await Promise.allSettled([l?.end(), pool.end(), leasePool.end(), ...[...setups].map((c) => c.end())]);
    },
  };
}
