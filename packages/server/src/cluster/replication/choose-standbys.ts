import type { LiveMember, ShardLease } from "../coordinator.js";

/** What {@link chooseStandbys} decides from. */
export interface StandbyChoiceInput {
  /** The leader choosing (this server's id): never its own standby. */
  readonly leader: string;
  /** Live members as the last heartbeat answered them; only `ready` ones are chosen. */
  readonly members: readonly LiveMember[];
  /** Every shard's row as last read: the standbys already named count against their members. */
  readonly leases: readonly Pick<ShardLease, "shard" | "standbyId">[];
  /** The shards to choose a standby for (their current standby, if any, is chosen afresh). */
  readonly shards: readonly number[];
}

/**
 * Choose a standby for each of `shards`: among ready members other than the leader, the one that
 * is standby of the fewest shards so far (counting the rows' standbys, and each choice made here as
 * it is made), so standbys spread evenly. Ties go to `ties[shard mod ties.length]` of the tied
 * members sorted by id, so that leaders choosing at the same moment from the same rows do not all
 * pick the same member. Pure. Answers `null` for a shard when no other ready member exists.
 */
export function chooseStandbys(input: StandbyChoiceInput): Map<number, string | null> {
  const choosing = new Set(input.shards);
  const candidates = input.members
    .filter((m) => m.ready && m.serverId !== input.leader)
    .map((m) => m.serverId)
    .sort();
  const load = new Map<string, number>(candidates.map((id) => [id, 0]));
  for (const row of input.leases) {
    if (row.standbyId === null || choosing.has(row.shard)) continue;
    const n = load.get(row.standbyId);
    if (n !== undefined) load.set(row.standbyId, n + 1);
  }
  const out = new Map<number, string | null>();
  for (const shard of input.shards) {
    let fewest = Infinity;
    for (const id of candidates) fewest = Math.min(fewest, load.get(id)!);
    const ties = candidates.filter((id) => load.get(id) === fewest);
    const chosen = ties.length === 0 ? null : ties[shard % ties.length]!;
    if (chosen !== null) load.set(chosen, load.get(chosen)! + 1);
    out.set(shard, chosen);
  }
  return out;
}

/**
 * True when `row`'s standby should be chosen again: none is named, or the named one is no longer a
 * live ready member (it stopped, or is in its join wait after a restart).
 */
export function standbyGone(row: Pick<ShardLease, "standbyId">, members: readonly LiveMember[]): boolean {
  return row.standbyId === null || !members.some((m) => m.ready && m.serverId === row.standbyId);
}

/** What {@link standbyToMoveTo} decides from. */
export interface StandbyMoveInput extends Omit<StandbyChoiceInput, "shards"> {
  /** The shard whose standby might move. */
  readonly shard: number;
  /** Its standby now (an adoption kept it: a balance move's former leader). */
  readonly current: string;
}

/**
 * The member `shard`'s in-sync standby should move to so standbys spread ({@link chooseStandbys}'s
 * choice), or `null` to keep `current`: only a member standby of fewer other shards than `current`
 * is worth a move (each costs a snapshot), so a move never makes the spread worse. Pure.
 */
export function standbyToMoveTo(input: StandbyMoveInput): string | null {
  const chosen = chooseStandbys({ ...input, shards: [input.shard] }).get(input.shard) ?? null;
  if (chosen === null || chosen === input.current) return null;
  const load = (id: string): number => input.leases.filter((r) => r.shard !== input.shard && r.standbyId === id).length;
  return load(chosen) < load(input.current) ? chosen : null;
}
