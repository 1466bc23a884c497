import { shardOf, type ClusterResponse } from "@leasehold/protocol";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startCli, type CliProcess } from "../support/cli-process.js";
import { rawRequest } from "../support/raw-request.js";
import { sleep } from "../support/wait-for.js";
import { clusterOf, ledBy, op, settled } from "./cluster-support.js";
import { startLatencyProxies, type LatencyProxies } from "./latency-proxies.js";
import { createTestSchema, type TestSchema } from "./pg-schema.js";

// The default leader lease: the question is whether a healthy leader keeps its shards when every
// statement takes 400 ms, with the lease and statement timeout a real cluster runs with.
const LEADER_LEASE_MS = 3_000;
/** Held in each direction: every statement's round trip takes 400 ms more. */
const ONE_WAY_MS = 200;
const NAMESPACES = 2_000;
/** Touches in flight at once (each server's statement pool is saturated far beyond this). */
const CONCURRENCY = 100;

/** `leasehold_cluster_shards_lost_total{reason}` of one server (0 when never counted). */
async function lost(url: string, reason: string): Promise<number> {
  const text = (await rawRequest(url, "/metrics", { method: "GET" })).text;
  const line = new RegExp(`^leasehold_cluster_shards_lost_total\\{reason="${reason}"\\} (\\d+)`, "m").exec(text);
  return line === null ? 0 : Number(line[1]);
}

describe("cluster CLI: 400 ms statements, a SIGTERM hand-over of ~20 shards and 2,000 new namespaces at once", () => {
  let schema: TestSchema;
  let proxies: LatencyProxies | null = null;
  const running: CliProcess[] = [];
  beforeEach(async () => {
    schema = await createTestSchema();
  });
  afterEach(async () => {
    for (const server of running.splice(0)) {
      server.child.kill("SIGKILL");
      await server.exited;
    }
    await proxies?.close();
    proxies = null;
    await schema.drop();
  });

  it("no survivor loses a shard to its gate: renewals are sent on time and applied as they arrive, whatever passes and bound loads run", async () => {
    // Servers and proxies in processes of their own (the proxies' delays and the servers' timers
    // never wait for this process's 2,000 requests).
    proxies = await startLatencyProxies(3);
    const started = await Promise.allSettled(
      proxies.ports.map((port) => {
        const connectionString = schema.connectionString.replace("127.0.0.1:5432", `127.0.0.1:${port}`);
        return startCli(["--port", "0", "--cluster", connectionString, "--leader-lease-ms", String(LEADER_LEASE_MS), "--lease-ms", "2000", "--log-level", "info"]);
      }),
    );
    // Every one that started is stopped after the test, even when another failed to.
    for (const s of started) if (s.status === "fulfilled") running.push(s.value);
    for (const s of started) if (s.status === "rejected") throw s.reason;
    const servers = [...running];
    const urls = servers.map((s) => s.url);
    // Settled and balanced (21-22 of the 64 shards each) before the database slows down.
    const map = await settled(urls, 90_000, (m) => urls.every((u) => ledBy(m, u) >= 21));
    await proxies.setLatency(ONE_WAY_MS);
    // A full renewal round at the new latency before anything else happens.
    await sleep(LEADER_LEASE_MS / 2);
    const [victim, ...survivors] = servers as [CliProcess, CliProcess, CliProcess];
    const gateBefore = await Promise.all(survivors.map((s) => lost(s.url, "gate")));

    // SIGTERM of a peer (its shards are released with NOTIFY, the survivors acquire them at
    // 400 ms a statement), and at the same moment 2,000 namespaces nobody used yet: each needs
    // its bound read and stored before its first timestamp, on the survivors' statement pools.
    victim.child.kill("SIGTERM");
    let next = 0;
    let current: ClusterResponse = map;
    const answers = new Map<number, number>();
    const touch = async (): Promise<void> => {
      for (let i = next++; i < NAMESPACES; i = next++) {
        const ns = `slow-${i}`;
        const leader = current.leaders[shardOf(ns, current.shards)]!.leaderUrl;
        const url = leader === null || leader === victim.url ? survivors[i % 2]!.url : leader;
        const answer = await op(url, ns, "timestamps", { count: 1 }).catch(() => null);
        const status = answer?.status ?? 0;
        answers.set(status, (answers.get(status) ?? 0) + 1);
        if (status === 421) current = await clusterOf(survivors[0]!.url).catch(() => current);
      }
    };
    const touchedFrom = performance.now();
    await Promise.all(Array.from({ length: CONCURRENCY }, touch));
    const touchedMs = Math.round(performance.now() - touchedFrom);
    expect((await victim.exited).code).toBe(0);
    // A leader lease more: a gate starved of renewals during the burst closes within one.
    await sleep(LEADER_LEASE_MS);

    const gateAfter = await Promise.all(survivors.map((s) => lost(s.url, "gate")));
    const gateLines = survivors.flatMap((s) => s.lines.filter((l) => l.msg === "shard lost" && String(l.reason).includes("gate")));
    const report = { gateLosses: gateAfter.map((n, i) => n - gateBefore[i]!), answers: Object.fromEntries(answers), touchedMs, first: gateLines.slice(0, 3) };
    expect(report.gateLosses, JSON.stringify(report)).toEqual([0, 0]);
    // The load was real (some namespaces were served, under 400 ms statements) and every shard
    // of the victim found a survivor.
    expect(answers.get(200) ?? 0).toBeGreaterThan(0);
    await settled(survivors.map((s) => s.url), 20_000);
  }, 180_000);
});
