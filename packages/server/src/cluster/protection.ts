import type { ShardLease } from "./coordinator.js";
import type { StandbyTarget } from "./replication/shard-replication.js";
import type { ShardTerm } from "./shard-term.js";

/**
 * This server's part of the cluster's protection (PROTOCOL.md "Cluster mode", Health): the shards
 * it leads and how many of them have an in-sync standby, the shards it stands by for and how many
 * of those are marked in sync, and whether all of them are.
 */
export interface Protection {
  readonly shardsLed: number;
  /** Shards led here whose row names an in-sync standby. */
  readonly shardsLedInSync: number;
  /** Shards whose row names this process (server id and incarnation) as standby. */
  readonly standbyFor: number;
  /** Those of {@link standbyFor} marked in sync, with a live leader. */
  readonly standbyForInSync: number;
  /**
   * Every shard led here has an in-sync standby and every shard stood by for is in sync: a crash of
   * this server, or of any one other, loses none of the locks of those shards. Never with
   * `--replicas 0`, nor while this server's last read of the rows is older than a leader lease.
   */
  readonly protected: boolean;
}

/** What {@link protectionOf} reads of the cluster runtime. */
export interface ProtectionSource {
  readonly serverId: string;
  /** This process's incarnation: a row names it as standby only with this one. */
  readonly incarnation: string;
  /** This server's term per shard (`null`: not led here). */
  readonly terms: readonly (ShardTerm | null)[];
  /** The lease rows as last read. */
  readonly leases: readonly ShardLease[];
  /** The last read of the rows is younger than a leader lease. */
  readonly leasesFresh: boolean;
  /** Standbys exist (`--replicas 1`); with `--replicas 0` nothing is ever protected. */
  readonly replicating: boolean;
}

/**
 * The standby of a term led here, as its leader knows the row (the leader writes the standby
 * columns itself, so it is never behind its own last read): the standby it named, in sync while
 * its rule says so, and the replication lag. `null` while it named none.
 */
export function ledStandby(term: ShardTerm): { readonly target: StandbyTarget; readonly inSync: boolean; readonly lagEntries: number; readonly lagMs: number } | null {
  const replication = term.replicator?.replication;
  const target = replication?.standby ?? null;
  if (replication === undefined || target === null) return null;
  // A rule "marking-out" still reads in sync in the row, but the leader already stopped counting on it.
  const view = replication.view();
  return { target, inSync: view.inSync, lagEntries: view.lagEntries, lagMs: Math.round(view.lagMs) };
}

/**
 * This server's {@link Protection}, from its own terms (led shards) and the rows as it last read
 * them (shards it stands by for). A row whose leader's lease has expired counts as stood by for
 * but not in sync: the shard has no leader to protect, and its standby is about to take it over.
 */
export function protectionOf(source: ProtectionSource): Protection {
  let shardsLed = 0;
  let shardsLedInSync = 0;
  for (const term of source.terms) {
    if (term === null) continue;
    shardsLed++;
    if (ledStandby(term)?.inSync === true) shardsLedInSync++;
  }
  let standbyFor = 0;
  let standbyForInSync = 0;
  for (const row of source.leases) {
    if (row.standbyId !== source.serverId || row.standbyIncarnation !== source.incarnation) continue;
    if (source.terms[row.shard] != null) continue; // taken over or handed over here since the read
    standbyFor++;
    if (row.inSync && !row.expired && row.holder !== null) standbyForInSync++;
  }
  const allInSync = shardsLedInSync === shardsLed && standbyForInSync === standbyFor;
  return { shardsLed, shardsLedInSync, standbyFor, standbyForInSync, protected: source.replicating && source.leasesFresh && allInSync };
}
