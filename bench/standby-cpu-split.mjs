// Probe (not part of the suite): where the CPU of a paced pair goes, per process and per thread.
// Starts, one after the other, a single server, a 3-server cluster (--shards 1, --replicas 1) whose
// leader replicates to a TCP echo server (the echo floor, LEASEHOLD_TEST_ECHO_STANDBY_PORT), and the
// same cluster with its real standby; warms each with 2 s of 64 callers, then runs `rounds` rounds
// of 64 callers paced to 8,000 lock + tryUnlock pairs/s for 3 s (as `pnpm bench cluster` measures
// CPU per pair), and prints for each process the CPU (user + system, from /proc/<pid>/task/*/stat)
// per pair of its main thread (user and system apart) + its other threads (V8's compiler and
// garbage-collector helpers).
// Then the idle CPU of the real cluster's leader and standby over 5 s (timers, heartbeats, passes).
// With `auth` or `decode` among the setups, the same cluster whose standby answers without applying
// (LEASEHOLD_TEST_STANDBY_FLOOR: the floors of a standby that authenticates every frame).
// Usage (after `pnpm build`): node bench/standby-cpu-split.mjs [rounds=3] [single,echo,auth,decode,real]
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

/** CPU ms so far of `pid`'s main thread (user, then system) and of its other threads (both). */
function threads(pid) {
  let user = 0;
  let system = 0;
  let other = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    const f = readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8").split(") ")[1].split(" ");
    if (Number(tid) === pid) {
      user += Number(f[11]) * 10;
      system += Number(f[12]) * 10;
    } else other += (Number(f[11]) + Number(f[12])) * 10;
  }
  return [user, system, other];
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
      const us = (i) => (((a[i] - before[k][i]) * 1000) / run.pairs).toFixed(1);
      return `${k} ${us(0)}u ${us(1)}s +${us(2)}`;
    };
    out.push(`${Object.entries(pids).map(([k, p]) => per(k, p)).join(", ")} (${Math.round(run.pairs / run.seconds)}/s)`);
  }
  console.log(`${label}: µs per pair, main thread user (u) and system (s) + other threads, by round: ${out.join(" | ")}`);
}

if (which.includes("single")) {
  const s = await startServerProcess({ leaseMs: 2_000 });
  try {
    await measure("single server", [s.url], { server: s.child.pid });
  } finally {
    await s.stop();
  }
}
/** Start a settled 3-server cluster whose standby is in sync, run `fn(urls, leaderPid, standbyPid)`, then stop it. */
async function withCluster(options, fn) {
  const cluster = await startCluster(3, FLAGS, options);
  try {
    await stable(cluster, 3_000, 2_000);
    const [row] = await inSync(cluster, 30_000);
    await fn(cluster.members.map((m) => m.url), cluster.member(row.holder).child.pid, cluster.member(row.standbyId).child.pid);
  } finally {
    await cluster.close();
  }
}

if (which.includes("echo")) {
  const echo = await startEchoServer();
  try {
    const options = { extraArgs: ["--unsafe-test-knobs"], env: { LEASEHOLD_TEST_ECHO_STANDBY_PORT: String(echo.port) } };
    await withCluster(options, (urls, leader) => measure("echo floor", urls, { leader, echo: echo.child.pid }));
  } finally {
    await echo.stop();
  }
}
for (const floor of ["auth", "decode"]) {
  if (!which.includes(floor)) continue;
  // The floors of an authenticating standby (LEASEHOLD_TEST_STANDBY_FLOOR, benchmark only): the real
  // standby process, each frame's MAC checked and each answer signed, nothing applied.
  const options = { extraArgs: ["--unsafe-test-knobs"], env: { LEASEHOLD_TEST_STANDBY_FLOOR: floor } };
  await withCluster(options, (urls, leader, standby) => measure(`${floor} floor`, urls, { leader, standby }));
}
if (which.includes("real")) {
  await withCluster({ cli: process.env.LEASEHOLD_BENCH_CLI }, async (urls, leader, standby) => {
    const pids = { leader, standby };
    await measure("real standby", urls, pids);
    const before = Object.fromEntries(Object.entries(pids).map(([k, p]) => [k, threads(p)]));
    await sleep(5_000);
    const idle = Object.entries(pids).map(([k, p]) => `${k} ${((threads(p).reduce((a, b) => a + b) - before[k].reduce((a, b) => a + b)) / 5).toFixed(1)} ms/s`);
    console.log(`real cluster idle: ${idle.join(", ")}`);
  });
}
