// Probe (not part of the suite): where the CPU of a paced pair goes, per process and per thread.
// Starts, one after the other, a single server, a 3-server cluster (--shards 1, --replicas 1) whose
// leader replicates to a TCP echo server (the echo floor, LEASEHOLD_TEST_ECHO_STANDBY_PORT), and the
// same cluster with its real standby; warms each with 2 s of 64 callers, then runs `rounds` rounds
// of 64 callers paced to 8,000 lock + tryUnlock pairs/s for 3 s (as `pnpm bench cluster` measures
// CPU per pair), and prints for each process the CPU (user + system, from /proc/<pid>/task/*/stat)
// per pair of its main thread + its other threads (V8's compiler and garbage-collector helpers).
// Then the idle CPU of the real cluster's leader and standby over 5 s (timers, heartbeats, passes).
// Usage (after `pnpm build`): node bench/standby-cpu-split.mjs [rounds=3] [single,echo,real]
//   LEASEHOLD_TEST_PG=<url>     PostgreSQL (default postgres://postgres@127.0.0.1:5432/test)
//   LEASEHOLD_BENCH_CLI=<path>  another build's packages/server/dist/cli.js for the real cluster
import { readdirSync, readFileSync } from "node:fs";
import { inSync, sleep, stable, startCluster } from "./dist/bench-cluster.js";
import { startEchoServer } from "./dist/echo-server-process.js";
import { pacedRound } from "./dist/peers/paced-round.js";
import { leaseholdSession } from "./dist/same-promise-setups.js";
import { startServerProcess } from "./dist/server-process.js";
import { committers } from "./dist/suites/client.js";

const rounds = Number(process.argv[2] ?? 3);
const which = (process.argv[3] ?? "single,echo,real").split(",");
const FLAGS = ["--shards", "1", "--lease-ms", "2000"];

/** CPU ms so far of `pid`'s main thread and of its other threads. */
function threads(pid) {
  let main = 0;
  let other = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    const f = readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8").split(") ")[1].split(" ");
    const ms = (Number(f[11]) + Number(f[12])) * 10;
    if (Number(tid) === pid) main += ms;
    else other += ms;
  }
  return [main, other];
}

async function measure(label, urls, pids) {
  await committers(urls, 64, 2_000, "warm");
  const out = [];
  for (let i = 0; i < rounds; i++) {
    const session = leaseholdSession(urls, "try", "paced");
    const before = Object.fromEntries(Object.entries(pids).map(([k, p]) => [k, threads(p)]));
    const run = await pacedRound(session, 8_000, 3_000);
    await session.end();
    const per = (k, p) => {
      const a = threads(p);
      return `${k} ${(((a[0] - before[k][0]) * 1000) / run.pairs).toFixed(1)}+${(((a[1] - before[k][1]) * 1000) / run.pairs).toFixed(1)}`;
    };
    out.push(`${Object.entries(pids).map(([k, p]) => per(k, p)).join(", ")} (${Math.round(run.pairs / run.seconds)}/s)`);
  }
  console.log(`${label}: µs per pair, main thread + other threads, by round: ${out.join(" | ")}`);
}

if (which.includes("single")) {
  const s = await startServerProcess({ leaseMs: 2_000 });
  try {
    await measure("single server", [s.url], { server: s.child.pid });
  } finally {
    await s.stop();
  }
}
if (which.includes("echo")) {
  const echo = await startEchoServer();
  const cluster = await startCluster(3, FLAGS, { extraArgs: ["--unsafe-test-knobs"], env: { LEASEHOLD_TEST_ECHO_STANDBY_PORT: String(echo.port) } });
  try {
    await stable(cluster, 3_000, 2_000);
    const [row] = await inSync(cluster, 30_000);
    await measure("echo floor", cluster.members.map((m) => m.url), { leader: cluster.member(row.holder).child.pid, echo: echo.child.pid });
  } finally {
    await cluster.close();
    await echo.stop();
  }
}
if (which.includes("real")) {
  const cluster = await startCluster(3, FLAGS, { cli: process.env.LEASEHOLD_BENCH_CLI });
  try {
    await stable(cluster, 3_000, 2_000);
    const [row] = await inSync(cluster, 30_000);
    const pids = { leader: cluster.member(row.holder).child.pid, standby: cluster.member(row.standbyId).child.pid };
    await measure("real standby", cluster.members.map((m) => m.url), pids);
    const before = Object.fromEntries(Object.entries(pids).map(([k, p]) => [k, threads(p)]));
    await sleep(5_000);
    const idle = Object.entries(pids).map(([k, p]) => `${k} ${((threads(p)[0] + threads(p)[1] - before[k][0] - before[k][1]) / 5).toFixed(1)} ms/s`);
    console.log(`real cluster idle: ${idle.join(", ")}`);
  } finally {
    await cluster.close();
  }
}
