import { shardOf } from "@leasehold/protocol";
import { describe, expect, it } from "vitest";
import { startServer } from "../../../src/start-server.js";
import { waitFor } from "../../support/wait-for.js";
import { ledBy, namespaceLedBy, op, settled } from "../cluster-support.js";
import { schemaPerTest } from "../pg-schema.js";

const LEADER_LEASE_MS = 600;

describe("cluster servers with --replicas 1: a standby per shard, named in the row, in sync", () => {
  const bed = schemaPerTest<{ close(): Promise<unknown> }>();

  async function two() {
    const cluster = (serverId: string) => ({ connectionString: bed.schema.connectionString, leaderLeaseMs: LEADER_LEASE_MS, shards: 4, serverId, replicas: 1 as const });
    const a = await startServer({ leaseMs: 30_000, cluster: cluster("a") });
    bed.open.push(a);
    const b = await startServer({ leaseMs: 30_000, cluster: cluster("b") });
    bed.open.push(b);
    return { a, b };
  }

  type Row = { shard: number; holder: string; standby_id: string | null; standby_incarnation: string | null; in_sync: boolean };
  const rows = () => bed.schema.query<Row>("SELECT shard, holder, standby_id, standby_incarnation, in_sync FROM leases ORDER BY shard");
  /** Wait until every shard's row says its standby is in sync; answers the rows. */
  async function allInSync(): Promise<Row[]> {
    let current: Row[] = [];
    await waitFor(
      () => {
        void rows().then((r) => (current = r));
        return current.length === 4 && current.every((r) => r.in_sync);
      },
      "every shard's standby in sync",
      15_000,
    );
    return current;
  }
  const incarnations = async () => new Map((await bed.schema.query<{ server_id: string; incarnation: string }>("SELECT server_id, incarnation FROM members")).map((m) => [m.server_id, m.incarnation]));

  it("each leader names the other server, with its incarnation, and records it in sync; grants are acknowledged by it", async () => {
    const { a, b } = await two();
    // Balanced (two shards each), so no shard moves while the test looks at it.
    const map = await settled([a.url, b.url], 15_000, (m) => ledBy(m, a.url) === 2 && ledBy(m, b.url) === 2);
    const current = await allInSync();
    const members = await incarnations();
    for (const row of current) {
      expect(row.standby_id).not.toBe(row.holder);
      expect(row.standby_incarnation).toBe(members.get(row.standby_id!));
    }
    const ns = namespaceLedBy(map, a.url);
    const granted = await op(a.url, ns, "lock", { locks: [{ descriptor: "d", mode: "exclusive" }] });
    expect(granted.json).toMatchObject({ status: "acquired" });
    const metrics = (await fetch(`${a.url}/metrics`).then((r) => r.text())).split("\n");
    expect(metrics.find((l) => l.startsWith("leasehold_replication_ack_seconds_count"))).toMatch(/ [1-9]\d*$/);
    expect(metrics.find((l) => l.startsWith("leasehold_replication_in_sync_shards"))).toMatch(/ [1-9]$/);
  });

  it("the standby goes away: the leader records not in sync before it answers the grant, and grants go on", async () => {
    const { a, b } = await two();
    // Balanced (two shards each), so no shard moves while the test looks at it.
    const map = await settled([a.url, b.url], 15_000, (m) => ledBy(m, a.url) === 2 && ledBy(m, b.url) === 2);
    const ns = namespaceLedBy(map, a.url);
    const current = await allInSync();
    const shard = shardOf(ns, 4);
    expect(current[shard]).toMatchObject({ holder: "a", standby_id: "b", in_sync: true });
    await b.close();
    const granted = await op(a.url, ns, "lock", { locks: [{ descriptor: "after", mode: "exclusive" }] });
    expect(granted.json).toMatchObject({ status: "acquired" });
    // The grant was answered only once the row said its shard's standby is not in sync.
    const [row] = await bed.schema.query<Row>("SELECT shard, holder, standby_id, standby_incarnation, in_sync FROM leases WHERE shard = $1", [shard]);
    expect(row).toMatchObject({ holder: "a", in_sync: false });
    const metrics = await fetch(`${a.url}/metrics`).then((r) => r.text());
    expect(metrics).toMatch(/leasehold_replication_not_in_sync_total [1-9]/);
  });
});
