import { sleep } from "./control-cluster.js";
import type { RunSchema } from "./pg-run-schema.js";

/** One shard's lease row as the standby faults read it. */
export interface LeaseRow {
  readonly shard: number;
  /** The leader's server id, `null` when released. */
  readonly holder: string | null;
  readonly standbyId: string | null;
  readonly inSync: boolean;
  readonly epoch: number;
  /** The row's lease has not expired (by the database's clock). */
  readonly live: boolean;
}

/** Every shard's lease row, by shard. */
export async function leaseRows(schema: RunSchema): Promise<LeaseRow[]> {
  const rows = await schema.query<{ shard: number; holder: string | null; standby_id: string | null; in_sync: boolean; epoch: string; live: boolean }>(
    "SELECT shard, holder, standby_id, in_sync, epoch, expires_at > clock_timestamp() AS live FROM leases ORDER BY shard",
  );
  return rows.map((r) => ({ shard: r.shard, holder: r.holder, standbyId: r.standby_id, inSync: r.in_sync, epoch: Number(r.epoch), live: r.live }));
}

/** Server ids of the members that are ready (past their join wait) with a heartbeat within `withinMs`. */
export async function readyMembers(schema: RunSchema, withinMs: number): Promise<string[]> {
  const rows = await schema.query<{ server_id: string }>(
    "SELECT server_id FROM members WHERE ready AND heartbeat_at > clock_timestamp() - make_interval(secs => $1::float8 / 1000)",
    [withinMs],
  );
  return rows.map((r) => r.server_id);
}

/** True when the row is led, live, and names an in-sync standby other than its leader. */
export const inSyncRow = (r: LeaseRow): boolean => r.holder !== null && r.live && r.inSync && r.standbyId !== null && r.standbyId !== r.holder;

/**
 * Wait until the cluster is whole: every server id in `serverIds` is a ready member, and every
 * shard is led with an in-sync standby. Throws with the last rows seen after `timeoutMs`.
 */
export async function waitWhole(schema: RunSchema, serverIds: readonly string[], leaderLeaseMs: number, timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const [ready, rows] = await Promise.all([readyMembers(schema, 2 * leaderLeaseMs), leaseRows(schema)]);
    if (serverIds.every((id) => ready.includes(id)) && rows.length > 0 && rows.every(inSyncRow)) return;
    if (performance.now() > deadline) {
      throw new Error(`the cluster was not whole again within ${timeoutMs} ms: ready ${ready.join(", ")}; rows ${JSON.stringify(rows)}`);
    }
    await sleep(50);
  }
}
