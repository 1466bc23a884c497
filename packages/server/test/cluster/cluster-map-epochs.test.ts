import type { ClusterResponse } from "@leasehold/protocol";
import { describe, expect, it } from "vitest";
import { startServer, type RunningServer } from "../../src/start-server.js";
import { sleep } from "../support/wait-for.js";
import { clusterOf, ledBy, settled } from "./cluster-support.js";
import { schemaPerTest } from "./pg-schema.js";
import { startTcpProxy, type TcpProxy } from "./tcp-proxy.js";

// GET /v1/cluster's epochs and its staleness rule (PROTOCOL.md "Cluster mode"): each entry carries
// the shard row's epoch as the server last read it, and a server whose last read of the leadership
// is older than a leader lease names no leader (a client would otherwise route by, and retire live
// terms on, a view that may have been deposed meanwhile).

const LEADER_LEASE_MS = 1_500;
const LEASE_MS = 2_000;

describe("cluster: /v1/cluster epochs and stale views", () => {
  const bed = schemaPerTest<RunningServer | TcpProxy>();
  const start = async (connectionString: string): Promise<RunningServer> => {
    const server = await startServer({ leaseMs: LEASE_MS, cluster: { connectionString, leaderLeaseMs: LEADER_LEASE_MS, shards: 4 } });
    bed.open.push(server);
    return server;
  };
  const rowEpochs = async (): Promise<number[]> =>
    (await bed.schema.query<{ epoch: string }>("SELECT epoch FROM leases ORDER BY shard")).map((r) => Number(r.epoch));

  it("entries carry the lease rows' epochs; a server cut off from PostgreSQL names no leader once its last read is a leader lease old", async () => {
    const a = await start(bed.schema.connectionString);
    const proxy = await startTcpProxy(5432);
    bed.open.push(proxy);
    const b = await start(bed.schema.connectionString.replace("127.0.0.1:5432", `127.0.0.1:${proxy.port}`));
    const map = await settled([a.url, b.url], 15_000, (m) => ledBy(m, a.url) === 2 && ledBy(m, b.url) === 2);
    // Settled: both views agree, and each entry's epoch is its row's (no pass changed a row since).
    expect(map.leaders.map((l) => l.epoch)).toEqual(await rowEpochs());
    expect(map.leaders.every((l) => l.epoch >= 1)).toBe(true);

    const cutAt = performance.now();
    proxy.cut();
    // b's last read ages: within a leader lease (plus a pass and some slack for a loaded machine)
    // it names no leader for any shard, its own included (their gates closed too); the epochs it
    // shows are still those it last read, never lower.
    let stale: ClusterResponse = await clusterOf(b.url);
    while (stale.leaders.some((l) => l.leaderUrl !== null) && performance.now() - cutAt < 3 * LEADER_LEASE_MS) {
      await sleep(50);
      stale = await clusterOf(b.url);
    }
    expect(stale.leaders.filter((l) => l.leaderUrl !== null || l.leaderId !== null)).toEqual([]);
    for (const l of stale.leaders) expect(l.epoch).toBeGreaterThanOrEqual(map.leaders[l.shard]!.epoch);

    // a, still connected, takes b's shards: their epochs grow past the ones b's view shows.
    const live = await settled([a.url], 15_000, (m) => ledBy(m, a.url) === 4);
    for (const l of live.leaders) {
      if (map.leaders[l.shard]!.leaderUrl === b.url) expect(l.epoch).toBeGreaterThan(stale.leaders[l.shard]!.epoch);
      else expect(l.epoch).toBe(map.leaders[l.shard]!.epoch);
    }
    expect(live.leaders.map((l) => l.epoch)).toEqual(await rowEpochs());
  });

  it("a single server answers one shard, led by itself, at epoch 1", async () => {
    const server = await startServer({ leaseMs: LEASE_MS });
    bed.open.push(server);
    const map = await clusterOf(server.url);
    expect(map.leaders).toEqual([{ shard: 0, leaderUrl: server.url, leaderId: server.service.leaderId, epoch: 1, standby: null }]);
  });
});
