import { describe, expect, it } from "vitest";
import { startServer, type RunningServer } from "../../src/start-server.js";
import { sleep } from "../support/wait-for.js";
import { clusterOf, ledBy, settled } from "./cluster-support.js";
import { schemaPerTest } from "./pg-schema.js";

const LEADER_LEASE_MS = 3_000;
const SHARDS = 4;

describe("cluster: a SIGTERM hand-over while another server is in its join wait", () => {
  const bed = schemaPerTest<RunningServer>();
  const servers = bed.open;
  const start = async (): Promise<RunningServer> => {
    const server = await startServer({ leaseMs: 1_000, cluster: { connectionString: bed.schema.connectionString, leaderLeaseMs: LEADER_LEASE_MS, shards: SHARDS } });
    servers.push(server);
    return server;
  };
  const transitions = async (): Promise<number> => Number((await bed.schema.query<{ n: string }>("SELECT sum(transitions) AS n FROM leases"))[0]!.n);

  it("every released shard has a new leader well within a leader lease; the joiner gets its share later, one shard at a time, none bouncing", async () => {
    const [a, b] = await Promise.all([start(), start()]);
    await settled([a.url, b.url], 15_000, (m) => ledBy(m, a.url) === 2 && ledBy(m, b.url) === 2);
    const c = await start();
    // c's heartbeat row is in (ready = false: its join wait of a leader lease has begun).
    const deadline = Date.now() + 5_000;
    while ((await bed.schema.query("SELECT 1 FROM members")).length < 3) {
      if (Date.now() > deadline) throw new Error("the joiner never heartbeated");
      await sleep(10);
    }
    expect(await bed.schema.query<{ ready: boolean }>("SELECT ready FROM members ORDER BY heartbeat_at DESC LIMIT 1")).toEqual([{ ready: false }]);
    const before = await transitions();
    const released = (await clusterOf(b.url)).leaders.filter((l) => l.leaderUrl === a.url).map((l) => l.shard);
    expect(released).toHaveLength(2);

    const stoppedAt = performance.now();
    await a.close();
    let handedOverMs = Infinity;
    while (performance.now() - stoppedAt < LEADER_LEASE_MS * 2) {
      const map = await clusterOf(b.url);
      if (released.every((shard) => ![null, a.url].includes(map.leaders[shard]!.leaderUrl))) {
        handedOverMs = performance.now() - stoppedAt;
        break;
      }
      await sleep(10);
    }
    // Under the old rule b, at its share of 4 / 2 (c counted), declined and the shards waited
    // for c's join wait to end: about a whole leader lease.
    expect(handedOverMs).toBeLessThan(LEADER_LEASE_MS / 2);
    // By b: c, still in its join wait, takes nothing.
    const handedTo = await clusterOf(b.url);
    expect(released.map((shard) => handedTo.leaders[shard]!.leaderUrl)).toEqual([b.url, b.url]);

    // Once ready, c gets its share by balance, one shard at a time; nothing bounces: exactly four
    // acquisitions since the stop (b took a's two, then c took two from b), and none after.
    await settled([b.url, c.url], 15_000, (m) => ledBy(m, b.url) === 2 && ledBy(m, c.url) === 2);
    expect(await transitions()).toBe(before + 4);
    await sleep(LEADER_LEASE_MS);
    expect(await transitions()).toBe(before + 4);
    const map = await clusterOf(c.url);
    expect([ledBy(map, b.url), ledBy(map, c.url)]).toEqual([2, 2]);
  }, 60_000);
});
