// Probe (not part of the suite): the lone caller's lock call latency (lock + awaited unlock, as
// `pnpm bench cluster`'s cluster_c1_p50_ratio_over_single measures it) of a single server and of a
// 3-server cluster with an in-sync standby (--shards 1 --replicas 1), side by side and alternating,
// for one build or two (an A/B comparison: each build gets its own single server and cluster), then
// lock+tryUnlock pairs/s at 64 callers the same way. With DIAG=1 it also measures a cluster without a
// standby (--replicas 0), which tells the cluster's own cost from the standby's.
// Usage (after `pnpm build`): node bench/c1-latency.mjs [rounds=6] [c1Ms=3000] [c64Ms=3000]
//   LEASEHOLD_TEST_PG=<url>      PostgreSQL (default postgres://postgres@127.0.0.1:5432/test)
//   LEASEHOLD_PROBE_CLI=<path>   the build measured (default this worktree's packages/server/dist/cli.js)
//   LEASEHOLD_PROBE_CLI_B=<path> a second build measured beside it (A/B)
//   DIAG=1                       also a cluster with --replicas 0
//   PROFILE_DIR=<dir>            CPU profiles of the cluster members (--cpu-prof, sampled every 50 µs)
//   NODE_ARGS="<flags>"          more Node flags for every server (for example --perf-basic-prof for perf)
// c64Ms = 0 skips the 64-caller runs. Besides the p50s it prints the CPU (user + system, from
// /proc/<pid>/stat) the single server, the leader and the standby used per lock + unlock in the c1 runs,
// and per lock+tryUnlock pair in the c64 runs.
// Every server it starts is stopped, and every schema it creates dropped, at the end.
import { readFileSync } from "node:fs";
import { loadavg } from "node:os";
import { fileURLToPath } from "node:url";
import { LockClient } from "@leasehold/client";
import { startServerProcess } from "./dist/server-process.js";
import { inSync, stable, startCluster } from "./dist/bench-cluster.js";
import { committers } from "./dist/suites/client.js";
import { silentLogger } from "./dist/silent-logger.js";
import { quantile } from "./dist/stats.js";

/** User and system CPU (ms) of `pid` so far, from /proc/<pid>/stat. */
function cpuSplit(pid) {
  const f = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  return [Number(f[11]) * 10, Number(f[12]) * 10];
}

const rounds = Number(process.argv[2] ?? 6);
const c1Ms = Number(process.argv[3] ?? 3000);
const c64Ms = Number(process.argv[4] ?? 3000);
const builds = [["A", process.env.LEASEHOLD_PROBE_CLI ?? fileURLToPath(new URL("../packages/server/dist/cli.js", import.meta.url))]];
if (process.env.LEASEHOLD_PROBE_CLI_B !== undefined) builds.push(["B", process.env.LEASEHOLD_PROBE_CLI_B]);
const diag = process.env.DIAG === "1";
const nodeArgs = [...(process.env.PROFILE_DIR === undefined ? [] : ["--cpu-prof", "--cpu-prof-dir", process.env.PROFILE_DIR, "--cpu-prof-interval", "50"]), ...(process.env.NODE_ARGS ?? "").split(" ").filter((a) => a !== "")];

/** Lock call times (µs) of one caller doing lock + awaited unlock for `ms` (oneCaller of cluster-pairs-trials.ts). */
async function oneCaller(target, ms, namespace) {
  const where = typeof target === "string" ? { baseUrl: target } : { baseUrls: [...target] };
  const client = LockClient.http({ ...where, namespace, logger: silentLogger() });
  const times = [];
  const end = performance.now() + ms;
  for (let n = 0; performance.now() < end; n++) {
    const t0 = performance.now();
    const res = await client.lock([{ descriptor: `c1-k${n % 256}`, mode: "exclusive" }], { acquireTimeoutMs: 5_000 });
    times.push((performance.now() - t0) * 1000);
    if (res.status !== "acquired") throw new Error("lock on the caller's own key was not granted within 5 s");
    await client.unlock([res.token]);
  }
  await client.close();
  return times;
}

const singles = [];
const clusters = [];
try {
  const targets = [];
  for (const [name, cli] of builds) {
    const single = await startServerProcess({ cli, nodeArgs, leaseMs: 2_000 });
    singles.push(single);
    targets.push({ name: `${name}-single`, target: single.url });
    const withStandby = await startCluster(3, ["--shards", "1", "--lease-ms", "2000", "--replicas", "1"], { cli, nodeArgs });
    clusters.push(withStandby);
    targets.push({ name: `${name}-cluster`, target: withStandby.members.map((m) => m.url), cluster: withStandby });
    if (diag) {
      const noStandby = await startCluster(3, ["--shards", "1", "--lease-ms", "2000", "--replicas", "0"], { cli, nodeArgs });
      clusters.push(noStandby);
      targets.push({ name: `${name}-nostandby`, target: noStandby.members.map((m) => m.url), noStandby });
    }
  }
  await Promise.all(clusters.map((c) => stable(c, 3_000, 2_000)));
  for (const t of targets) {
    if (t.noStandby !== undefined) {
      const [row] = await t.noStandby.rows();
      t.pids = [t.noStandby.member(row.holder).child.pid];
      continue;
    }
    if (t.cluster === undefined) {
      t.pids = [singles.find((s) => s.url === t.target).child.pid];
      continue;
    }
    const [row] = await inSync(t.cluster, 30_000);
    const pidOf = (id) => t.cluster.member(id).child.pid;
    t.pids = [pidOf(row.holder), pidOf(row.standbyId)];
  }
  if (c64Ms > 0) for (const t of targets) await committers(t.target, 64, 3_000, "warm");
  for (const t of targets) await oneCaller(t.target, 1_000, "warm-c1");
  const c1 = new Map(targets.map((t) => [t.name, []]));
  const c64 = new Map(targets.map((t) => [t.name, []]));
  // CPU (µs) per lock + unlock of the single server, and of the cluster's leader and standby, over the c1 runs.
  const cpu = new Map(targets.map((t) => [t.name, { us: t.pids.map(() => 0), sys: t.pids.map(() => 0), n: 0 }]));
  // CPU (µs) per lock+tryUnlock pair at 64 callers, likewise.
  const cpu64 = new Map(targets.map((t) => [t.name, { us: t.pids.map(() => 0), n: 0 }]));
  console.log(`pids: ${targets.map((t) => `${t.name} ${t.pids.join("/")}`).join(", ")}`);
  console.log(`load before: ${loadavg().map((x) => x.toFixed(2)).join(" ")}`);
  for (let r = 0; r < rounds; r++) {
    // Rotate the order each round, so a drift of the machine favours no target.
    const order = targets.map((_, i) => targets[(i + r) % targets.length]);
    const line = [];
    for (const t of order) {
      const before = t.pids.map(cpuSplit);
      const times = await oneCaller(t.target, c1Ms, `r${r}c1`);
      const c = cpu.get(t.name);
      t.pids.forEach((pid, k) => {
        const [user, sys] = cpuSplit(pid);
        c.us[k] += (user + sys - before[k][0] - before[k][1]) * 1000;
        c.sys[k] += (sys - before[k][1]) * 1000;
      });
      c.n += times.length;
      const p50 = quantile(times, 0.5);
      c1.get(t.name).push(p50);
      line.push(`${t.name} ${p50.toFixed(0)}µs`);
    }
    for (const t of c64Ms > 0 ? order : []) {
      const before = t.pids.map(cpuSplit);
      const run = await committers(t.target, 64, c64Ms, `r${r}c64`);
      const c = cpu64.get(t.name);
      t.pids.forEach((pid, k) => {
        const [user, sys] = cpuSplit(pid);
        c.us[k] += (user + sys - before[k][0] - before[k][1]) * 1000;
      });
      c.n += run.pairs;
      c64.get(t.name).push(run.pairs / run.elapsed);
    }
    for (const t of targets) if (t.cluster !== undefined && !(await t.cluster.rows())[0].inSync) line.push(`${t.name} OUT OF SYNC`);
    console.log(`round ${r}: c1 p50 ${line.join(", ")}; c64 ${targets.map((t) => `${t.name} ${c64.get(t.name).at(-1)?.toFixed(0)}/s`).join(", ")}; load ${loadavg()[0].toFixed(2)}`);
  }
  const median = (xs) => quantile(xs, 0.5);
  console.log("medians over rounds:");
  for (const [name] of builds) {
    const s = median(c1.get(`${name}-single`));
    const c = median(c1.get(`${name}-cluster`));
    const ratios = c1.get(`${name}-cluster`).map((x, i) => x / c1.get(`${name}-single`)[i]);
    let out = `${name}: c1 p50 single ${s.toFixed(0)} µs, cluster ${c.toFixed(0)} µs, ratio (median of per-round) ${median(ratios).toFixed(2)}`;
    if (diag) out += `, no-standby cluster ${median(c1.get(`${name}-nostandby`)).toFixed(0)} µs (its leader's CPU ${(cpu.get(`${name}-nostandby`).us[0] / cpu.get(`${name}-nostandby`).n).toFixed(1)} µs per lock+unlock, sys ${(cpu.get(`${name}-nostandby`).sys[0] / cpu.get(`${name}-nostandby`).n).toFixed(1)})`;
    const cs = cpu.get(`${name}-single`), cc = cpu.get(`${name}-cluster`);
    out += `; c1 CPU µs per lock+unlock: single ${(cs.us[0] / cs.n).toFixed(1)} (sys ${(cs.sys[0] / cs.n).toFixed(1)}), leader ${(cc.us[0] / cc.n).toFixed(1)} (sys ${(cc.sys[0] / cc.n).toFixed(1)}), standby ${(cc.us[1] / cc.n).toFixed(1)} (sys ${(cc.sys[1] / cc.n).toFixed(1)})`;
    out += `; c64 pairs/s single ${median(c64.get(`${name}-single`)).toFixed(0)}, cluster ${median(c64.get(`${name}-cluster`)).toFixed(0)}`;
    if (diag) out += `, no-standby ${median(c64.get(`${name}-nostandby`)).toFixed(0)}`;
    if (c64Ms > 0) out += `; c64 CPU µs per pair: ${targets.filter((t) => t.name.startsWith(`${name}-`)).map((t) => `${t.name} ${cpu64.get(t.name).us.map((u) => (u / cpu64.get(t.name).n).toFixed(1)).join("/")}`).join(", ")}`;
    console.log(out);
  }
  console.log(`load after: ${loadavg().map((x) => x.toFixed(2)).join(" ")}`);
} finally {
  await Promise.allSettled([...clusters.map((c) => c.close()), ...singles.map((s) => s.stop())]);
}
