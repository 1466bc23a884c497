import { inSync, namespaceLedBy, settled, sleep, startCluster, type BenchCluster } from "../bench-cluster.js";
import { costFigures, survivalFigures } from "../cluster-ha-figures.js";
import { samePromiseFigures } from "../same-promise-figures.js";
import type { Figure, Suite } from "../figures.js";
import type { ServerProcess } from "../server-process.js";
import { nowMs, quantile, round } from "../stats.js";
import { committers } from "./client.js";

/** ms from `from` until a member other than `victim` answers a timestamp of `namespace` with 200. */
async function firstServed(cluster: BenchCluster, victim: ServerProcess, namespace: string, from: number): Promise<number> {
  const others = cluster.members.filter((m) => m !== victim);
  for (;;) {
    const served = await Promise.all(
      others.map(async (m) => {
        try {
          const res = await fetch(`${m.url}/v1/namespaces/${namespace}/timestamps`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: '{"count":1}',
            signal: AbortSignal.timeout(1_000),
          });
          await res.arrayBuffer();
          return res.status === 200;
        } catch {
          return false;
        }
      }),
    );
    if (served.includes(true)) return nowMs() - from;
    if (nowMs() - from > 30_000) throw new Error(`no other server served ${namespace} within 30 s`);
    await sleep(5);
  }
}

/** Failover trials: `signal` to the leader of a namespace, time to the first timestamp served elsewhere, restart. */
async function failovers(signal: "SIGKILL" | "SIGTERM", trials: number, progress: (m: string) => void): Promise<number[]> {
  const cluster = await startCluster(3, ["--shards", "3"]);
  const times: number[] = [];
  try {
    for (let t = 0; t < trials; t++) {
      // Each trial starts from a balanced cluster (every server leads one shard, so the restarted
      // one is past its join wait): see docs/benchmarks.md for what a hand-over costs before that.
      // A SIGTERM trial also waits until every shard's standby is in sync, as a deploy would between
      // restarts: otherwise the stop first gets its shard a standby (a snapshot and its
      // acknowledgement) and the trial measures that too.
      if (signal === "SIGTERM") await inSync(cluster, 60_000, (rows) => new Set(rows.map((r) => r.holder)).size === cluster.members.length);
      const map = await settled(cluster, 60_000, (m) => cluster.members.every((s) => m.leaders.some((l) => l.leaderUrl === s.url)));
      const victimIndex = t % 3;
      const victim = cluster.members.find((m) => m.url === map.leaders[victimIndex % map.shards]!.leaderUrl)!;
      const namespace = namespaceLedBy(map, victim.url);
      const exited = new Promise((r) => victim.child.once("exit", r));
      const at = nowMs();
      victim.child.kill(signal);
      times.push(await firstServed(cluster, victim, namespace, at));
      progress(`${signal} ${t + 1}/${trials}: ${Math.round(times.at(-1)!)} ms`);
      await exited;
      await cluster.restart(cluster.members.indexOf(victim));
    }
  } finally {
    await cluster.close();
  }
  return times;
}

/** Pairs/s of lock+tryUnlock (64 callers per namespace, one client each) over `namespaces`, all at once. */
async function aggregatePairs(target: string | readonly string[], namespaces: readonly string[], ms: number, perNamespace: number): Promise<number> {
  const runs = await Promise.all(namespaces.map((ns) => committers(target, perNamespace, ms, ns)));
  return runs.reduce((s, r) => s + r.pairs / r.elapsed, 0);
}

/**
 * Cluster mode (issues 12 and 21): failover after SIGKILL and SIGTERM of a leader (default 3 s
 * leader lease), lock+tryUnlock throughput through a cluster with and without a standby against a
 * single server (c64, c1, CPU per grant), the same beside Redis primary + replica and etcd (issue 32) and spread over two servers against one, locks kept
 * through a rolling restart and a crash, and PostgreSQL statements per second of an idle cluster. Needs PostgreSQL
 * (127.0.0.1:5432 or `LEASEHOLD_TEST_PG`); only runs when named (`pnpm bench cluster`).
 */
export const clusterSuite: Suite = {
  name: "cluster",
  description: "cluster mode over PostgreSQL: failover times, locks through rolling restarts and crashes, cost of standbys (also beside Redis primary + replica and etcd), scale-out, idle coordinator load",
  defaultOn: false,
  async run(ctx) {
    const base = { command: ctx.command, quick: ctx.quick };
    const figures: Figure[] = [];
    const trials = ctx.quick ? 2 : 8;

    const kills = await failovers("SIGKILL", trials, ctx.progress);
    figures.push(
      { name: "failover_ms_p50", value: round(quantile(kills, 0.5), 0), unit: "ms", ...base, note: `SIGKILL of a leader, default 3 s leader lease, 3 servers, ${trials} trials: kill to first timestamp served by the new leader (${kills.map(Math.round).join(", ")})` },
      { name: "failover_ms_max", value: round(Math.max(...kills), 0), unit: "ms", ...base, note: `the slowest of the same ${trials} trials` },
    );
    const terms = await failovers("SIGTERM", trials, ctx.progress);
    figures.push({ name: "failover_ms_sigterm_p50", value: round(quantile(terms, 0.5), 0), unit: "ms", ...base, note: `SIGTERM of a leader (hand-over with its table to its in-sync standby, NOTIFY), each trial from a balanced cluster whose standbys are all in sync, ${trials} trials (${terms.map(Math.round).join(", ")})` });

    const ms = ctx.quick ? 1_000 : 3_000;
    const rounds = ctx.quick ? 1 : 8;
    // Cost: the cluster with and without a standby over the single server, c1, CPU per grant (cluster-ha-figures.ts).
    figures.push(...(await costFigures(ctx)));
    // Issue 32: the same beside the peers that make the same promise (Redis + replica, etcd), CPU per pair at a paced load.
    figures.push(...(await samePromiseFigures(ctx)));
    // Issue 21: locks through a rolling restart and a crash, and a crash without a standby.
    figures.push(...(await survivalFigures(ctx)));
    // Two namespaces, each led by its own server, against both led by one server (a cluster of one).
    {
      // A shard handed over by balance grants locks only after the lease-wait (validForMs, half of --lease-ms, plus a tenth): keep it short and wait it out.
      const two = await startCluster(2, ["--shards", "2", "--lease-ms", "2000"]);
      const one = await startCluster(1, ["--shards", "2", "--lease-ms", "2000"]);
      try {
        const map = await settled(two, 30_000, (m) => new Set(m.leaders.map((l) => l.leaderUrl)).size === 2);
        const spread = [namespaceLedBy(map, two.members[0]!.url), namespaceLedBy(map, two.members[1]!.url)];
        await settled(one, 30_000);
        await sleep(2_500);
        await aggregatePairs(two.members.map((m) => m.url), spread, 500, 32);
        await aggregatePairs(one.members.map((m) => m.url), spread, 500, 32);
        const ratios: number[] = [];
        for (let r = 0; r < rounds; r++) {
          const a = await aggregatePairs(one.members.map((m) => m.url), spread, ms, 32);
          const b = await aggregatePairs(two.members.map((m) => m.url), spread, ms, 32);
          ratios.push(b / a);
        }
        ctx.progress(`scale-out ratios ${ratios.map((x) => x.toFixed(3)).join(", ")}`);
        figures.push({ name: "cluster_scaleout_ratio_2_servers", value: round(quantile(ratios, 0.5), 3), unit: "ratio", ...base, note: `aggregate lock+tryUnlock pairs/s, 2 namespaces × 32 callers, each namespace led by its own server of a 2-server cluster, over both led by a 1-server cluster; ${rounds} rounds of ${ms / 1000} s, each the 1-server cluster first (${ratios.map((x) => x.toFixed(3)).join(", ")}). On 2 cores the clients, both servers and PostgreSQL share the CPUs, so this cannot show the scale-out separate machines would` });
      } finally {
        await two.close();
        await one.close();
      }
    }
    // Idle cluster: statements counted by the servers' own coordinator metric.
    {
      const cluster = await startCluster(3, ["--shards", "3"]);
      try {
        await settled(cluster, 30_000);
        await sleep(3_000);
        const count = async (): Promise<number> => {
          let total = 0;
          for (const m of cluster.members) {
            const text = await (await fetch(`${m.url}/metrics`)).text();
            for (const line of text.split("\n")) if (line.startsWith("leasehold_coordinator_statement_seconds_count")) total += Number(line.split(" ").at(-1));
          }
          return total;
        };
        const window = ctx.quick ? 3_000 : 15_000;
        const before = await count();
        const t0 = nowMs();
        await sleep(window);
        const rate = ((await count()) - before) / ((nowMs() - t0) / 1000);
        ctx.progress(`idle: ${rate.toFixed(1)} statements/s`);
        figures.push({ name: "coordinator_statements_per_s_idle", value: round(rate, 1), unit: "statements/s", ...base, note: `3 idle servers, default 3 s leader lease, 3 shards, over ${window / 1000} s: leasehold_coordinator_statement_seconds_count summed over the servers (LISTEN traffic not included)` });
      } finally {
        await cluster.close();
      }
    }
    return figures;
  },
};
