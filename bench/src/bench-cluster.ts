import { randomBytes } from "node:crypto";
import { shardOf, type ClusterResponse } from "@leasehold/protocol";
import pg from "pg";
import { startServerProcess, type ServerProcess } from "./server-process.js";
import { nowMs } from "./stats.js";

/** The PostgreSQL the benchmark clusters use (`LEASEHOLD_TEST_PG`, else the local one). */
export const PG_URL = process.env.LEASEHOLD_TEST_PG ?? "postgres://postgres@127.0.0.1:5432/test";
/** Resolve after `ms`. */
export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** A cluster of CLI servers over a schema of its own (dropped by `close`). */
export interface BenchCluster {
  members: ServerProcess[];
  /** Start member `i` again on its port and with its `--server-id` (after a kill or a stop). */
  restart(i: number): Promise<void>;
  /** The shards' rows as PostgreSQL holds them now, in shard order. */
  rows(): Promise<LeaseRow[]>;
  /** The `--server-id` of member `i` (`bench-<i>`: fixed, so a restart rejoins as the same member). */
  serverId(i: number): string;
  /** The member running as `serverId` (a lease row's `holder` or `standbyId`); throws when none does. */
  member(serverId: string | null): ServerProcess;
  close(): Promise<void>;
}

/** What the benchmarks read of a shard's row in the `leases` table. */
export interface LeaseRow {
  readonly shard: number;
  readonly holder: string | null;
  readonly epoch: number;
  readonly standbyId: string | null;
  readonly inSync: boolean;
  /**
   * The standby the row names runs as the incarnation the row names. A standby restarted under an
   * idle shard leaves the row saying in sync until the leader next sends it an entry and is refused.
   */
  readonly standbyCurrent: boolean;
}

/** How {@link startCluster} starts its members beyond the cluster flags. */
export interface ClusterStartOptions {
  /** Node flags of every member (for example `--cpu-prof`). Default none. */
  readonly nodeArgs?: readonly string[] | undefined;
  /** CLI flags of every member after all others (a test knob's): see `startServerProcess`. Default none. */
  readonly extraArgs?: readonly string[] | undefined;
  /** Environment variables of every member on top of this process's (a test knob's). Default none. */
  readonly env?: Readonly<Record<string, string>> | undefined;
  /** Another build's `packages/server/dist/cli.js` to run (an A/B comparison). Default this one's. */
  readonly cli?: string | undefined;
}

/**
 * Start `size` CLI servers as one cluster over a new schema of its own, with `flags` (`--shards`,
 * `--lease-ms`, ...); `close` stops them and drops the schema.
 */
export async function startCluster(size: number, flags: readonly string[], options: ClusterStartOptions = {}): Promise<BenchCluster> {
  const schema = `lh_bench_${randomBytes(6).toString("hex")}`;
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  const conn = `${PG_URL}?options=${encodeURIComponent(`-c search_path=${schema}`)}`;
  const args = ["--cluster", conn, ...flags];
  const members: ServerProcess[] = [];
  const serverId = (i: number): string => `bench-${i}`;
  const start = (i: number, port?: number): Promise<ServerProcess> =>
    startServerProcess({ clusterArgs: [...args, "--server-id", serverId(i)], nodeArgs: options.nodeArgs, port, cli: options.cli, extraArgs: options.extraArgs, env: options.env });
  const gone = (m: ServerProcess): boolean => m.child.exitCode !== null || m.child.signalCode !== null;
  const close = async (): Promise<void> => {
    try {
      await Promise.all(members.filter((m) => !gone(m)).map((m) => m.stop()));
      await admin.query(`DROP SCHEMA ${schema} CASCADE`);
    } finally {
      await admin.end();
    }
  };
  try {
    members.push(await start(0));
    // allSettled, so members that did start are known (and stopped) when another fails.
    const rest = await Promise.allSettled(Array.from({ length: size - 1 }, (_, i) => start(i + 1)));
    for (const r of rest) if (r.status === "fulfilled") members.push(r.value);
    const failed = rest.find((r) => r.status === "rejected");
    if (failed !== undefined) throw failed.reason;
  } catch (err) {
    await close().catch(() => undefined);
    throw err;
  }
  return {
    members,
    async restart(i) {
      const port = Number(new URL(members[i]!.url).port);
      members[i] = await start(i, port);
    },
    async rows() {
      const { rows } = await admin.query<{ shard: number; holder: string | null; epoch: string; standby_id: string | null; in_sync: boolean; standby_current: boolean }>(
        `SELECT l.shard, l.holder, l.epoch, l.standby_id, l.in_sync, coalesce(m.incarnation = l.standby_incarnation, false) AS standby_current
         FROM ${schema}.leases l LEFT JOIN ${schema}.members m ON m.server_id = l.standby_id ORDER BY l.shard`,
      );
      return rows.map((r) => ({ shard: r.shard, holder: r.holder, epoch: Number(r.epoch), standbyId: r.standby_id, inSync: r.in_sync, standbyCurrent: r.standby_current }));
    },
    serverId,
    member(id) {
      const found = members.find((_, i) => serverId(i) === id);
      if (found === undefined) throw new Error(`no member of the cluster runs as ${String(id)}`);
      return found;
    },
    close,
  };
}

/** `GET /v1/cluster` of one member, or undefined when it does not answer 200 within 2 s. */
export async function clusterMap(url: string): Promise<ClusterResponse | undefined> {
  try {
    const res = await fetch(`${url}/v1/cluster`, { signal: AbortSignal.timeout(2_000) });
    return res.ok ? ((await res.json()) as ClusterResponse) : undefined;
  } catch {
    return undefined;
  }
}

/** Who leads each shard in `map`, standbys left out (a leader's view of its own standbys is a pass ahead of the others'). */
function leadership(map: ClusterResponse): string {
  return JSON.stringify(map.leaders.map(({ shard, leaderUrl, leaderId, epoch }) => ({ shard, leaderUrl, leaderId, epoch })));
}

/** Wait until `members[0]`'s map names a leader for every shard and `each` holds; answers the map. */
export async function settled(cluster: BenchCluster, timeoutMs: number, each: (m: ClusterResponse) => boolean = () => true): Promise<ClusterResponse> {
  const end = nowMs() + timeoutMs;
  for (;;) {
    const maps = await Promise.all(cluster.members.map((m) => clusterMap(m.url)));
    const first = maps[0];
    if (first !== undefined && maps.every((m) => m !== undefined && leadership(m) === leadership(first)) && first.leaders.every((l) => l.leaderUrl !== null) && each(first)) return first;
    if (nowMs() > end) throw new Error(`the cluster did not settle in ${timeoutMs} ms: ${JSON.stringify(maps)}`);
    await sleep(50);
  }
}

/**
 * Wait until leadership has stopped moving: the same leaders over two leader leases (a member takes
 * nothing in its join wait, then balance may move a shard to it), and then out the lease-wait a
 * moved shard's new leader keeps before it grants locks (half of `leaseMs` plus a tenth: `leaseMs` covers it).
 */
export async function stable(cluster: BenchCluster, leaderLeaseMs: number, leaseMs: number): Promise<ClusterResponse> {
  let map = await settled(cluster, 30_000);
  let moved = false;
  for (let i = 0; i < 10; i++) {
    await sleep(2 * leaderLeaseMs);
    const again = await settled(cluster, 30_000);
    if (leadership(again) === leadership(map)) {
      if (moved) await sleep(leaseMs);
      return again;
    }
    moved = true;
    map = again;
  }
  throw new Error(`leadership kept moving: ${JSON.stringify(map.leaders)}`);
}

/**
 * Wait until every shard's row names a holder and an in-sync standby (`--replicas 1`) that runs as
 * the incarnation the row names, and `each` holds of the rows; answers them. This is when a hand-over or a crash keeps every lock.
 */
export async function inSync(cluster: BenchCluster, timeoutMs: number, each: (rows: readonly LeaseRow[]) => boolean = () => true): Promise<LeaseRow[]> {
  const end = nowMs() + timeoutMs;
  let pokedAt = nowMs();
  for (;;) {
    const rows = await cluster.rows();
    if (rows.length > 0 && rows.every((r) => r.holder !== null && r.inSync && r.standbyCurrent) && each(rows)) return rows;
    // A row that says in sync while its standby restarted stays so until the leader next sends an
    // entry (an idle shard sends none): grant a lock in such a shard, once a second, to make it notice.
    if (nowMs() - pokedAt > 1_000) {
      pokedAt = nowMs();
      for (const r of rows.filter((row) => row.inSync && !row.standbyCurrent)) await poke(cluster, r.shard, rows.length);
    }
    if (nowMs() > end) throw new Error(`the shards were not all in sync within ${timeoutMs} ms: ${JSON.stringify(rows)}`);
    await sleep(50);
  }
}

/** Grant (and leave to lapse) a lock on a new descriptor in a namespace of `shard`, through whichever member leads it. */
async function poke(cluster: BenchCluster, shard: number, shards: number): Promise<void> {
  let namespace = "bench-0";
  for (let i = 0; i < 10_000 && shardOf(namespace, shards) !== shard; i++) namespace = `bench-${i}`;
  const body = JSON.stringify({ locks: [{ descriptor: `poke-${randomBytes(4).toString("hex")}`, mode: "exclusive" }] });
  await Promise.all(
    cluster.members.map((m) =>
      fetch(`${m.url}/v1/namespaces/${namespace}/lock`, { method: "POST", headers: { "content-type": "application/json" }, body, signal: AbortSignal.timeout(2_000) })
        .then((res) => res.arrayBuffer())
        .catch(() => undefined),
    ),
  );
}

/** A namespace whose shard `url` leads. */
export function namespaceLedBy(map: ClusterResponse, url: string): string {
  for (let i = 0; i < 10_000; i++) if (map.leaders[shardOf(`bench-${i}`, map.shards)]!.leaderUrl === url) return `bench-${i}`;
  throw new Error(`${url} leads nothing`);
}
