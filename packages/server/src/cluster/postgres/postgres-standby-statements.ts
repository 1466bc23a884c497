import type { AdoptedTerm, Coordinator, HandedOverTerm, LeaderTerm, MemberInfo } from "../coordinator.js";
import type { LoadedBoundEvent } from "./coordinator-event.js";
import { boundLoadSql, parseLoadedBounds } from "./postgres-bound-load.js";
import type { RunStatement } from "./run-statement.js";

/** The fence of a leader's write: the row is still this term's, on this process. */
const FENCE = "shard = $1 AND epoch = $2 AND holder = $3 AND incarnation = $4";

const termValues = (term: LeaderTerm): unknown[] => [term.shard, String(term.epoch), term.serverId, term.incarnation];

/**
 * The standby statements of the PostgreSQL coordinator (DESIGN.md "Locks that outlive their
 * leader"): the cluster key, naming a standby, recording `in_sync`, and the hand-over. Every write
 * is one statement fenced by the leader's epoch and incarnation, and bumps the row's `version` (a
 * follower watching the row for a takeover starts its observation again, and its acquisition of
 * the version it saw matches nothing).
 */
export function standbyStatements(
  run: RunStatement,
  channel: string,
  onCommitted?: ((event: LoadedBoundEvent) => void) | undefined,
): Pick<Coordinator, "readStandbyCandidates" | "readClusterKey" | "nameStandby" | "setInSync" | "moveStandby" | "handOver" | "adoptHandOver"> {
  return {
    async readStandbyCandidates(withinMs) {
      const rows = await run<{ server_id: string; url: string; incarnation: string | null; ready: boolean }>(
        "read-standby-candidates",
        `SELECT server_id, url, incarnation, ready FROM members
         WHERE heartbeat_at > clock_timestamp() - make_interval(secs => $1::float8 / 1000) ORDER BY server_id`,
        [withinMs],
      );
      // A row of an older version has no incarnation: it cannot be named a standby.
      return rows.filter((r) => r.incarnation !== null).map((r): MemberInfo => ({ serverId: r.server_id, url: r.url, incarnation: r.incarnation!, ready: r.ready }));
    },

    async readClusterKey() {
      const rows = await run<{ key: Buffer }>("read-cluster-key", "SELECT key FROM cluster_key WHERE id = 1");
      const key = rows[0]?.key;
      if (key === undefined || key.length !== 32) throw new Error("the cluster has no 256-bit key in table cluster_key (it is created with the schema at the first start)");
      return key;
    },

    async nameStandby(term, standby, round) {
      const rows = await run(
        "name-standby",
        `UPDATE leases SET standby_id = $5, standby_incarnation = $6, in_sync = false, sync_round = $7, version = version + 1
         WHERE ${FENCE} AND sync_round < $7 RETURNING shard`,
        [...termValues(term), standby?.serverId ?? null, standby?.incarnation ?? null, String(round)],
      );
      return rows.length === 1;
    },

    async setInSync(term, standbyIncarnation, inSync, round) {
      const rows = await run(
        "set-in-sync",
        `UPDATE leases SET in_sync = $6, sync_round = $7, version = version + 1
         WHERE ${FENCE} AND sync_round < $7 AND (NOT $6 OR standby_incarnation = $5) RETURNING shard`,
        [...termValues(term), standbyIncarnation, inSync, String(round)],
      );
      return rows.length === 1;
    },

    async moveStandby(term, from, to, round) {
      const rows = await run(
        "move-standby",
        `UPDATE leases SET standby_id = $7, standby_incarnation = $8, sync_round = $9, version = version + 1
         WHERE ${FENCE} AND sync_round < $9 AND in_sync
           AND ((standby_id = $5 AND standby_incarnation = $6) OR (standby_id = $7 AND standby_incarnation = $8)) RETURNING shard`,
        [...termValues(term), from.serverId, from.incarnation, to.serverId, to.incarnation, String(round)],
      );
      return rows.length === 1;
    },

    async handOver(term, standby, leaderLeaseMs, formerAsStandby = false, round) {
      // SET reads the row as it was: holder and incarnation become the standby's, and (with $9) the
      // standby fields the former holder's, from the same row.
      const rows = await run<{ epoch: string; url: string }>(
        "hand-over",
        `WITH h AS (
           UPDATE leases l SET holder = l.standby_id, url = m.url, incarnation = l.standby_incarnation, epoch = l.epoch + 1,
             version = l.version + 1, transitions = l.transitions + 1,
             expires_at = clock_timestamp() + make_interval(secs => $7::float8 / 1000),
             standby_id = CASE WHEN $9 THEN l.holder END, standby_incarnation = CASE WHEN $9 THEN l.incarnation END,
             in_sync = $9, sync_round = 0
           FROM members m
           WHERE l.shard = $1 AND l.epoch = $2 AND l.holder = $3 AND l.incarnation = $4
             AND l.standby_id = $5 AND l.standby_incarnation = $6 AND l.in_sync
             AND m.server_id = l.standby_id AND m.incarnation = l.standby_incarnation
             AND ($10::bigint IS NULL OR l.sync_round < $10::bigint)
           RETURNING l.shard, l.epoch, l.url)
         SELECT h.epoch, h.url, pg_notify($8, h.shard::text) FROM h`,
        [...termValues(term), standby.serverId, standby.incarnation, leaderLeaseMs, channel, formerAsStandby, round === undefined ? null : String(round)],
      );
      const row = rows[0];
      return row === undefined ? null : ({ shard: term.shard, epoch: Number(row.epoch), url: row.url } satisfies HandedOverTerm);
    },

    async adoptHandOver(shard, epoch, claim, bounds, clearStandby = false) {
      // The lease-wait record as an acquisition writes it: complete up to the previous epoch (the
      // leader that handed over) when that one kept it, else its lock lease as well. The bounds
      // asked for are loaded in the same statement, fenced by the adoption's row (locked by it).
      // An in-sync standby (a balance move's former leader) stays named unless $11: SET reads the
      // row as it was, RETURNING the row as it is.
      const rows = await run<{ epoch: string; wait_ms: number; bounds: unknown; standby_id: string | null; standby_incarnation: string | null }>(
        "adopt-hand-over",
        `WITH a AS (
           UPDATE leases l SET expires_at = clock_timestamp() + make_interval(secs => $6::float8 / 1000), version = l.version + 1,
             standby_id = CASE WHEN l.in_sync AND NOT $11 THEN l.standby_id END,
             standby_incarnation = CASE WHEN l.in_sync AND NOT $11 THEN l.standby_incarnation END,
             in_sync = (l.in_sync AND NOT $11 AND l.standby_id IS NOT NULL), sync_round = 0,
             lock_lease_ms = GREATEST(l.lock_lease_ms, $7), valid_for_ms = GREATEST(p.wait_ms, $8), valid_for_epoch = l.epoch
           FROM (SELECT shard, CASE WHEN valid_for_epoch = epoch - 1 THEN valid_for_ms ELSE GREATEST(valid_for_ms, lock_lease_ms) END AS wait_ms
                 FROM leases WHERE shard = $1) p
           WHERE l.shard = p.shard AND l.epoch = $2 AND l.holder = $3 AND l.incarnation = $4 AND l.leader_id = $5
           RETURNING l.epoch, p.wait_ms, l.standby_id, l.standby_incarnation),
         ${boundLoadSql({ fence: "a", epoch: "$2", namespaces: "$9", block: "$10" })}
         SELECT a.epoch, a.wait_ms, a.standby_id, a.standby_incarnation, loaded.bounds FROM a, loaded`,
        [
          shard,
          String(epoch),
          claim.serverId,
          claim.incarnation,
          claim.leaderId,
          claim.leaderLeaseMs,
          Math.ceil(claim.lockLeaseMs),
          Math.ceil(claim.validForMs),
          [...(bounds?.namespaces ?? [])],
          String(bounds?.block ?? 1),
          clearStandby,
        ],
      );
      const row = rows[0];
      if (row === undefined) return null;
      const term = { shard, epoch: Number(row.epoch) };
      const standby = row.standby_id !== null && row.standby_incarnation !== null ? { serverId: row.standby_id, incarnation: row.standby_incarnation } : null;
      return { ...term, lockDelayMs: row.wait_ms, bounds: parseLoadedBounds(row.bounds, term, onCommitted), standby } satisfies AdoptedTerm;
    },
  };
}
