import type { LiveMember, ShardLease } from "../coordinator.js";

/** What {@link chooseTaker} decides from. */
export interface TakerChoiceInput {
  /** This server (the one giving a shard up). */
  readonly serverId: string;
  /** Live members as the last heartbeat answered them; only `ready` ones take shards. */
  readonly members: readonly LiveMember[];
  /** Every shard's row as last read: who leads how many (expired rows count for nobody). */
  readonly leases: readonly Pick<ShardLease, "holder" | "expired">[];
  /** The shards this server leads, each with the member its standby is in sync on now (`null`: none). */
  readonly led: readonly { readonly shard: number; readonly inSyncStandby: string | null }[];
  /** The surplus shard the plan would give up (`planShards`'s `release`). */
  readonly surplus: number;
}

/** A balance move: which shard to hand over, and to whom. */
export interface BalanceMove {
  readonly shard: number;
  /** The server id of the member that takes it (made its in-sync standby first). */
  readonly taker: string;
}

/**
 * Choose a balance move by hand-over (docs/cluster.md "Balance moves"). The takers are the ready
 * members other than this one that lead fewer shards (by the rows) than their share, shares as
 * `planShards` counts them (`⌊S/n⌋`, plus one for the first `S mod n` ready members in id order).
 * A shard of this server whose standby is already in sync on such a member moves to it (the
 * highest such shard: no snapshot needed, the hand-over is immediate); otherwise the plan's
 * surplus shard moves to the taker leading the fewest shards (ties: the lowest id), which becomes
 * its standby first. Pure. `null` when no member is short of its share.
 */
export function chooseTaker(input: TakerChoiceInput): BalanceMove | null {
  const able = [...new Set([...input.members.filter((m) => m.ready).map((m) => m.serverId), input.serverId])].sort();
  const count = input.leases.length;
  const n = Math.max(1, able.length);
  const leading = new Map<string, number>();
  for (const row of input.leases) if (row.holder !== null && !row.expired) leading.set(row.holder, (leading.get(row.holder) ?? 0) + 1);
  const short = able.filter((id, index) => id !== input.serverId && (leading.get(id) ?? 0) < Math.floor(count / n) + (index < count % n ? 1 : 0));
  if (short.length === 0) return null;
  const synced = input.led.filter((l) => l.inSyncStandby !== null && short.includes(l.inSyncStandby)).sort((a, b) => b.shard - a.shard)[0];
  if (synced !== undefined) return { shard: synced.shard, taker: synced.inSyncStandby! };
  let taker = short[0]!;
  for (const id of short) if ((leading.get(id) ?? 0) < (leading.get(taker) ?? 0)) taker = id;
  return { shard: input.surplus, taker };
}
