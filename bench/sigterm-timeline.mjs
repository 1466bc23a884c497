// Probe (not part of the suite): the timeline of a SIGTERM hand-over in a 3-server cluster
// (--shards 3, standbys on, --log-level debug) under the rolling-restart trial's paced load. For
// each SIGTERM of a shard leader it prints, in ms from the signal, from the servers' log lines:
// the victim's gate closing ("shard lost"), its leaving the member list, the final
// acknowledgement, the row moved ("shard handed over"), the NOTIFY heard on each server, the
// taker adopting ("adoption on NOTIFY tried", "shard acquired") and serving ("carried bounds
// loaded"); and from this process: the first answer of each kind from each other server and the
// first fresh grant (firstFreshGrant's method: each other server on its own loop, 5 ms after
// each answer), and the first grant through a LockClient started at the signal. At the end: the
// p50s, the paced load's acquisition times since the first SIGTERM, and locks lost.
// Usage (after `pnpm build`): node bench/sigterm-timeline.mjs [rounds=2]
//   LEASEHOLD_TEST_PG=<url>     PostgreSQL (default postgres://postgres@127.0.0.1:5432/test)
//   LEASEHOLD_PROBE_CLI=<path>  another build's packages/server/dist/cli.js (an A/B comparison)
//   PACED=0                     without the paced load
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { LockClient } from "@leasehold/client";
import { shardOf } from "@leasehold/protocol";
import { HeldLocks, PacedLoad } from "./dist/cluster-ha-probes.js";
import { silentLogger } from "./dist/silent-logger.js";

const rounds = Number(process.argv[2] ?? 2);
const PG = process.env.LEASEHOLD_TEST_PG ?? "postgres://postgres@127.0.0.1:5432/test";
const cli = process.env.LEASEHOLD_PROBE_CLI ?? fileURLToPath(new URL("../packages/server/dist/cli.js", import.meta.url));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const schema = `lh_probe_${randomBytes(6).toString("hex")}`;
const admin = new pg.Client({ connectionString: PG });
await admin.connect();
await admin.query(`CREATE SCHEMA ${schema}`);
const conn = `${PG}?options=${encodeURIComponent(`-c search_path=${schema}`)}`;

/** @type {{ url: string, child: import("node:child_process").ChildProcess, lines: any[], id: string }[]} */
const members = [];
function start(i, port = 0) {
  const id = `probe-${i}`;
  const child = spawn(process.execPath, [cli, "--host", "127.0.0.1", "--port", String(port), "--cluster", conn, "--shards", "3", "--server-id", id, "--log-level", "debug"], { stdio: ["ignore", "pipe", "inherit"] });
  const lines = [];
  return new Promise((resolve, reject) => {
    child.once("exit", (code) => reject(new Error(`exit ${code}`)));
    createInterface({ input: child.stdout }).on("line", (line) => {
      let e;
      try {
        e = JSON.parse(line);
      } catch {
        return;
      }
      lines.push(e);
      if (e.msg === "listening") resolve({ url: e.url, child, lines, id });
    });
  });
}
// Never leave a server behind when the probe fails.
process.on("exit", () => {
  for (const m of members) if (m.child.exitCode === null) m.child.kill("SIGKILL");
});
for (let i = 0; i < 3; i++) members.push(await start(i));
const urls = members.map((m) => m.url);

async function map(url) {
  try {
    const r = await fetch(`${url}/v1/cluster`, { signal: AbortSignal.timeout(2000) });
    return r.ok ? await r.json() : undefined;
  } catch {
    return undefined;
  }
}
async function rows() {
  return (
    await admin.query(
      `SELECT l.shard, l.holder, l.in_sync, coalesce(m.incarnation = l.standby_incarnation, false) AS cur FROM ${schema}.leases l LEFT JOIN ${schema}.members m ON m.server_id = l.standby_id ORDER BY l.shard`,
    )
  ).rows;
}
/** Every member leads one shard (balanced) and every row has a current in-sync standby. */
async function whole(timeoutMs = 90_000) {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const maps = await Promise.all(urls.map(map));
    const r = await rows();
    const agree = maps.every((m) => m && JSON.stringify(m.leaders.map((l) => l.leaderUrl)) === JSON.stringify(maps[0].leaders.map((l) => l.leaderUrl)) && m.leaders.every((l) => l.leaderUrl));
    const balanced = agree && urls.every((u) => maps[0].leaders.some((l) => l.leaderUrl === u));
    if (balanced && r.every((x) => x.holder && x.in_sync && x.cur)) return maps[0];
    if (Date.now() > end) throw new Error(`not whole: ${JSON.stringify(r)}`);
    // An idle shard whose standby restarted only notices on its next entry: the load sends some.
    await sleep(100);
  }
}
const nsOfShard = (s) => {
  for (let i = 0; ; i++) if (shardOf(`bench-${i}`, 3) === s) return `bench-${i}`;
};

let cmap = await whole();
const namespaces = [0, 1, 2].map(nsOfShard);
const held = await HeldLocks.take(urls, namespaces, 20);
// PACED=0: no paced load (the path's own latency, without CPU contention from the callers).
const load = process.env.PACED === "0" ? { between: () => [0], stop: async () => undefined, failures: 0 } : new PacedLoad(urls, namespaces, 8, 10);
const clients = Object.fromEntries(namespaces.map((ns) => [ns, LockClient.http({ baseUrls: [...urls], namespace: ns, logger: silentLogger() })]));
await sleep(3000);
const results = [];
const firstSignalAt = [];
import { monitorEventLoopDelay } from "node:perf_hooks";
const lag = monitorEventLoopDelay({ resolution: 5 });
lag.enable();
const at = (e) => e.time;

for (let r = 0; r < rounds; r++) {
  for (let i = 0; i < 3; i++) {
    const victim = members[i];
    cmap = (await map(urls[(i + 1) % 3])) ?? cmap;
    const shard = cmap.leaders.findIndex((l) => l.leaderUrl === victim.url);
    if (shard < 0) {
      console.log(`round ${r}.${i}: ${victim.id} leads nothing, skipped`);
      continue;
    }
    const ns = nsOfShard(shard);
    const others = members.filter((m) => m !== victim);
    const marks = others.map((m) => m.lines.length);
    const vmark = victim.lines.length;
    const exited = new Promise((res) => victim.child.once("exit", res));
    const body = JSON.stringify({ locks: [{ descriptor: `fresh-${r}-${i}`, mode: "exclusive" }] });
    const t0 = Date.now();
    const p0 = performance.now();
    firstSignalAt.push(p0);
    victim.child.kill("SIGTERM");
    // The client: a lock on a fresh descriptor through a LockClient that knew the victim as leader.
    const viaClient = clients[ns].lock([{ descriptor: `client-${r}-${i}`, mode: "exclusive" }], { acquireTimeoutMs: 10_000 }).then(
      (res) => ({ ms: performance.now() - p0, status: res.status }),
      (err) => ({ ms: performance.now() - p0, status: String(err.code ?? err) }),
    );
    // The raw poller, as firstFreshGrant.
    const seen = {};
    let fresh = null;
    // Each other server on a loop of its own (as firstFreshGrant polls), every 5 ms after its answer.
    await Promise.all(
      others.map(async (m) => {
        while (fresh === null && performance.now() - p0 < 15_000) {
          const sent = performance.now() - p0;
          try {
            const res = await fetch(`${m.url}/v1/namespaces/${ns}/lock`, { method: "POST", headers: { "content-type": "application/json" }, body, signal: AbortSignal.timeout(1_000) });
            const json = await res.json();
            const key = `${m.id} ${res.status}${json.error?.details?.leaderUrl ? `->${members.find((x) => x.url === json.error.details.leaderUrl)?.id}` : ""}${json.error?.details?.retryAfterMs ? ` ra${json.error.details.retryAfterMs}` : ""}${res.status === 503 ? ` "${json.error?.message?.slice(0, 70)}"` : ""}`;
            seen[key] ??= `${Math.round(sent)}..${Math.round(performance.now() - p0)}`;
            if (res.status === 200 && json.status === "acquired") fresh ??= performance.now() - p0;
          } catch (err) {
            seen[`${m.id} ${err.name}`] ??= `${Math.round(sent)}..${Math.round(performance.now() - p0)}`;
          }
          if (fresh === null) await sleep(5);
        }
      }),
    );
    const client = await viaClient;
    console.log(`(probe process event-loop delay so far: p50 ${Math.round(lag.percentile(50) / 1e6)} ms, p99 ${Math.round(lag.percentile(99) / 1e6)} ms, max ${Math.round(lag.max / 1e6)} ms)`);
    await exited;
    const tl = [];
    const add = (who, e) => tl.push([at(e) - t0, `${who}: ${e.msg}${e.shard !== undefined ? ` s${e.shard}` : ""}${e.waitedMs !== undefined ? ` waited ${e.waitedMs}` : ""}${e.tookMs !== undefined ? ` took ${e.tookMs}` : ""}${e.reason ? ` (${e.reason})` : ""}${e.passRunning ? " (pass running)" : ""}`]);
    const wanted = /adopting|adoption on NOTIFY|carried bounds|shard lost|left the member list|final log|handed over|NOTIFY heard|shard acquired|standby promoted|closing|stopped|hand-over/;
    for (const e of victim.lines.slice(vmark)) if (wanted.test(e.msg) && (e.shard === undefined || e.shard === shard || !/lost|hand/.test(e.msg))) add(victim.id, e);
    others.forEach((m, k) => {
      for (const e of m.lines.slice(marks[k])) if (wanted.test(e.msg) && (e.shard === undefined || e.shard === shard)) add(m.id, e);
    });
    for (const [k, v] of Object.entries(seen)) tl.push([Number(v.split("..")[0]), `poller first sent..answered ${v}: ${k}`]);
    // Every warning or error of any server in the window, whatever shard.
    for (const m of [victim, ...others]) for (const e of m.lines.slice(m === victim ? vmark : marks[others.indexOf(m)])) if (e.level >= 40) tl.push([at(e) - t0, `${m.id} WARN: ${e.msg} ${JSON.stringify({ shard: e.shard, epoch: e.epoch, standby: e.standby, outcome: e.outcome, err: e.err?.message })}`]);
    tl.push([Math.round(fresh ?? NaN), "poller: FIRST FRESH GRANT"]);
    tl.push([Math.round(client.ms), `LockClient lock from signal: ${client.status}`]);
    tl.sort((a, b) => a[0] - b[0]);
    console.log(`\n== round ${r}.${i}: SIGTERM ${victim.id} (leads shard ${shard}, ns ${ns})`);
    for (const [ms, what] of tl) console.log(`${String(ms).padStart(6)} ms  ${what}`);
    results.push({ fresh: Math.round(fresh ?? NaN), client: Math.round(client.ms) });
    members[i] = await start(i, Number(new URL(victim.url).port));
    const w0 = Date.now();
    await whole();
    console.log(`restarted; whole again after ${Date.now() - w0} ms`);
  }
}
const p50 = (xs) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];
console.log(`\nfresh grants (poller): ${results.map((x) => x.fresh).join(", ")} ms; p50 ${p50(results.map((x) => x.fresh))}`);
console.log(`LockClient grants: ${results.map((x) => x.client).join(", ")} ms; p50 ${p50(results.map((x) => x.client))}`);
const q = (xs, f) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(f * xs.length))];
const win = load.between(firstSignalAt[0], performance.now());
const base = load.between(firstSignalAt[0] - 3000, firstSignalAt[0]);
console.log(`paced load acquisitions: at rest p50 ${q(base, 0.5).toFixed(1)} p99 ${q(base, 0.99).toFixed(1)} ms (${base.length}); from the first SIGTERM on p50 ${q(win, 0.5).toFixed(1)} p99 ${q(win, 0.99).toFixed(1)} max ${Math.max(...win).toFixed(0)} ms (${win.length}), over 500 ms: ${win.filter((x) => x > 500).length}`);
console.log(`lost held locks: ${await held.lost()} of ${held.count}; load failures ${load.failures}`);
await load.stop();
await held.close();
for (const c of Object.values(clients)) await c.close();
await Promise.all(members.map((m) => (m.child.exitCode === null ? new Promise((res) => (m.child.once("exit", res), m.child.kill("SIGTERM"))) : null)));
await admin.query(`DROP SCHEMA ${schema} CASCADE`);
await admin.end();
