import { shardOf, type ClusterResponse } from "@leasehold/protocol";
import { pino } from "pino";
import { afterAll, describe, expect, it } from "vitest";
import { startServer, type RunningServer } from "../../src/start-server.js";
import { rawRequest } from "../support/raw-request.js";
import { sleep } from "../support/wait-for.js";
import { clusterOf, ledBy, op, settled } from "./cluster-support.js";
import { schemaPerTest } from "./pg-schema.js";
import { startTcpProxy, type TcpProxy } from "./tcp-proxy.js";

// The default leader lease: the question is whether a healthy leader keeps its shards when every
// statement takes 400 ms, with the lease and statement timeout a real cluster runs with.
const LEADER_LEASE_MS = 3_000;
/** Held in each direction: every statement's round trip takes 400 ms more. */
const ONE_WAY_MS = 200;
const NAMESPACES = 2_000;
/** Touches in flight at once (each server's statement pool is saturated far beyond this). */
const CONCURRENCY = 200;

/** `leasehold_cluster_shards_lost_total{reason}` of one server (0 when never counted). */
async function lost(url: string, reason: string): Promise<number> {
  const text = (await rawRequest(url, "/metrics", { method: "GET" })).text;
  const line = new RegExp(`^leasehold_cluster_shards_lost_total\\{reason="${reason}"\\} (\\d+)`, "m").exec(text);
  return line === null ? 0 : Number(line[1]);
}

describe("cluster: 400 ms statements, a SIGTERM hand-over of ~20 shards and 2,000 new namespaces at once", () => {
  const bed = schemaPerTest<RunningServer>();
  const proxies: TcpProxy[] = [];

  it("no survivor loses a shard to its gate: renewals are sent on time and applied as they arrive, whatever passes and bound loads run", async () => {
    const gateLines: string[] = [];
    try {
      const servers: RunningServer[] = [];
      for (let i = 0; i < 3; i++) {
        const proxy = await startTcpProxy(5432);
        proxies.push(proxy);
        const connectionString = bed.schema.connectionString.replace("127.0.0.1:5432", `127.0.0.1:${proxy.port}`);
        // Each gate loss's log line, to show in the failure message.
        const logger = pino({ level: "info" }, { write: (line: string) => void (line.includes("serving gate closed") && gateLines.push(`server ${i}: ${line}`)) });
        servers.push(await startServer({ logger, leaseMs: 2_000, cluster: { connectionString, leaderLeaseMs: LEADER_LEASE_MS } }));
      }
      bed.open.push(...servers);
      const urls = servers.map((s) => s.url);
      // Settled and balanced (21-22 shards each) before the database slows down.
      const map = await settled(urls, 30_000, (m) => urls.every((u) => ledBy(m, u) >= 21));
      for (const proxy of proxies) proxy.setLatency(ONE_WAY_MS);
      // A full renewal round at the new latency before anything else happens.
      await sleep(LEADER_LEASE_MS / 2);
      const [victim, ...survivors] = servers as [RunningServer, RunningServer, RunningServer];
      expect(ledBy(map, victim.url)).toBeGreaterThanOrEqual(21);
      const gateBefore = await Promise.all(survivors.map((s) => lost(s.url, "gate")));

      // SIGTERM of a peer (its shards are released with NOTIFY, the survivors acquire them at
      // 400 ms a statement), and at the same moment 2,000 namespaces nobody used yet: each needs
      // its bound read and stored before its first timestamp, on the survivors' statement pools.
      const stopping = victim.close();
      let next = 0;
      let current: ClusterResponse = map;
      const answers = new Map<number, number>();
      const touch = async (): Promise<void> => {
        for (let i = next++; i < NAMESPACES; i = next++) {
          const ns = `slow-${i}`;
          const leader = current.leaders[shardOf(ns, current.shards)]!.leaderUrl ?? survivors[i % 2]!.url;
          const url = leader === victim.url ? survivors[i % 2]!.url : leader;
          const answer = await op(url, ns, "timestamps", { count: 1 }).catch(() => null);
          const status = answer?.status ?? 0;
          answers.set(status, (answers.get(status) ?? 0) + 1);
          if (status === 421) current = await clusterOf(survivors[0]!.url).catch(() => current);
        }
      };
      await Promise.all([stopping, ...Array.from({ length: CONCURRENCY }, touch)]);
      // Two leader leases more: a gate starved of renewals during the burst closes within one.
      await sleep(2 * LEADER_LEASE_MS);

      const gateAfter = await Promise.all(survivors.map((s) => lost(s.url, "gate")));
      const report = { gateLosses: gateAfter.map((n, i) => n - gateBefore[i]!), answers: Object.fromEntries(answers), first: gateLines.slice(0, 3) };
      expect(report).toMatchObject({ gateLosses: [0, 0] });
      // The load was real (some namespaces were served, under 400 ms statements) and the victim's
      // shards all found a survivor.
      expect(answers.get(200) ?? 0).toBeGreaterThan(0);
      await settled(survivors.map((s) => s.url), 20_000);
    } finally {
      for (const proxy of proxies.splice(0)) proxy.setLatency(0);
    }
  }, 120_000);

  // The proxies outlive the servers (which the bed closes after the test): closed last.
  afterAll(async () => {
    await Promise.all(proxies.splice(0).map((p) => p.close()));
  });
});
