import type { ClusterRuntime } from "./cluster-runtime.js";
import type { ShardLease } from "./coordinator.js";
import { ledStandby } from "./protection.js";

// Who leads each shard as this server knows it (`GET /v1/cluster`, 421 answers, the status view).

/** One shard's leader as {@link shardLeadersOf} (and `ClusterLockService.shardLeaders`) answers it (`null`s: no leader known). */
export interface ShardLeader {
  readonly shard: number;
  /** The leader's server id (`--server-id`). */
  readonly serverId: string | null;
  /** The leader's advertised URL. */
  readonly url: string | null;
  /** The lock-table id of the leader's term (the `leaderId` of its leases). */
  readonly leaderId: string | null;
  readonly epoch: number;
  /**
   * The server keeping a copy of the shard's lock table, ready to take over with it, as the row
   * says (`null`: none, or no leader known): whether it is marked in sync, its URL where known (its
   * leader's own stream), and for the shards led here the replication lag (only the leader
   * measures it).
   */
  readonly standby: ShardStandby | null;
}

/** A shard's standby as {@link ShardLeader.standby} names it. */
export interface ShardStandby {
  readonly serverId: string;
  /** Its advertised URL, when this server streams to it; `null` otherwise (the member table has it). */
  readonly url: string | null;
  readonly inSync: boolean;
  /** Entries not acknowledged yet; only for a shard led here. */
  readonly lagEntries?: number | undefined;
  /** Age of the oldest entry not acknowledged, ms (0: none); only for a shard led here. */
  readonly lagMs?: number | undefined;
}

/** What {@link shardLeadersOf} reads of the runtime: its terms, the rows as last read, whether that read is fresh, its URL. */
export type LeaderView = Pick<ClusterRuntime, "terms" | "leases" | "leasesFresh" | "url">;

/**
 * Who leads each of `shards` as `runtime` knows it, with the leader's server id (what `GET
 * /v1/cluster` answers, plus the id): itself (`serverId`) for the terms it holds; another server
 * only while its last read of the lease rows is fresh and the row is live; otherwise nobody. The
 * standby is the one its leader names: for a term led here, as this server's own replication
 * knows it (it writes those columns itself), with the lag; for another leader's, as the row says.
 */
export function shardLeadersOf(runtime: LeaderView, serverId: string, shards: number): ShardLeader[] {
  const leaders: ShardLeader[] = [];
  for (let shard = 0; shard < shards; shard++) {
    const term = runtime.terms[shard];
    const epoch = Math.max(runtime.leases[shard]?.epoch ?? 0, term?.epoch ?? 0);
    const other = ledElsewhere(runtime, serverId, shard);
    // A term whose gate closed by time is not named: its leadership is unconfirmed until a renewal.
    if (term !== null && term !== undefined && !term.closedByTime) {
      const own = ledStandby(term);
      const standby = own === null ? null : { serverId: own.target.serverId, url: own.target.url, inSync: own.inSync, lagEntries: own.lagEntries, lagMs: own.lagMs };
      leaders.push({ shard, serverId, url: runtime.url, leaderId: term.leaderId, epoch, standby });
    } else if (other !== null && runtime.leasesFresh) {
      const standby = other.standbyId === null ? null : { serverId: other.standbyId, url: null, inSync: other.inSync };
      leaders.push({ shard, serverId: other.holder, url: other.url, leaderId: other.leaderId, epoch, standby });
    } else leaders.push({ shard, serverId: null, url: null, leaderId: null, epoch, standby: null });
  }
  return leaders;
}

/**
 * The row of `shard` as last read when it names another server than `serverId`, live; `null`
 * otherwise. Its URL is named to a client only while that read is fresh (PROTOCOL.md "Cluster
 * mode": a view older than a leader lease names no leader, in `GET /v1/cluster` and in 421 answers
 * alike; the shard may have changed hands since, even to this very server).
 */
export function ledElsewhere(runtime: Pick<LeaderView, "leases">, serverId: string, shard: number): ShardLease | null {
  const row = runtime.leases[shard];
  return row !== undefined && row.holder !== null && row.holder !== serverId && !row.expired ? row : null;
}
