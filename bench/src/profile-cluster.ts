/**
 * `pnpm bench:profile-cluster [label] [seconds]`: profile the replication ack path. Starts a 3-server
 * cluster (`--shards 1`, `--replicas 1`) with `node --cpu-prof` on every member, waits until the
 * shard's row says its standby is in sync, drives 64 callers of lock + tryUnlock through it for
 * `seconds` (default 8), and prints the top frames by self time and by area of the leader and of the
 * standby as Markdown, also written to `bench/results/profile-cluster-<label>.md`. The profiles are
 * kept in `bench/results/profiles/cluster-<label>-{leader,standby}.cpuprofile` (git-ignored).
 * A third argument `rate` paces the callers to `rate` pairs/s in all (peers/paced-round.ts) instead
 * of running them flat out: at a paced load batches are small, as in the issue's CPU-per-pair figures.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { inSync, startCluster, stable } from "./bench-cluster.js";
import { describeMachine } from "./machine.js";
import { cpuMs } from "./process-cpu.js";
import { byArea, topFrames, type CpuProfile, type Frame } from "./profile/top-frames.js";
import { committers } from "./suites/client.js";
import { pacedRound } from "./peers/paced-round.js";
import { leaseholdSession } from "./same-promise-setups.js";

const label = process.argv[2] ?? "current";
const seconds = Number(process.argv[3] ?? 8);
const rate = process.argv[4] === undefined ? null : Number(process.argv[4]);
const outDir = fileURLToPath(new URL("../results/profiles/", import.meta.url));
const profDir = mkdtempSync(join(tmpdir(), "leasehold-cluster-prof-"));

function table(title: string, frames: readonly Frame[]): string {
  return [title, "", "| self % | function (file:line) |", "| ---: | --- |", ...frames.map((f) => `| ${f.selfPercent.toFixed(1)} | \`${f.frame.replace(/\|/g, "\\|")}\` |`), ""].join("\n");
}

function areas(title: string, profile: CpuProfile): string {
  return [title, "", "| self % | area |", "| ---: | --- |", ...byArea(profile).filter((a) => a.percent >= 0.5).map((a) => `| ${a.percent.toFixed(1)} | ${a.area} |`), ""].join("\n");
}

/** The c64 callers paced to `pairsPerSecond` for `ms` (lock + tryUnlock), as {@link committers} reports a round. */
async function pacedPairs(urls: readonly string[], pairsPerSecond: number, ms: number): Promise<{ pairs: number; elapsed: number }> {
  const session = leaseholdSession(urls, "try", "profiled-paced");
  const run = await pacedRound(session, pairsPerSecond, ms);
  await session.end();
  return { pairs: run.pairs, elapsed: run.seconds };
}

// LEASEHOLD_BENCH_CLI: another build's packages/server/dist/cli.js (an A/B of two commits in one sitting).
const cluster = await startCluster(3, ["--shards", "1", "--lease-ms", "2000"], { nodeArgs: ["--cpu-prof", "--cpu-prof-dir", profDir], cli: process.env.LEASEHOLD_BENCH_CLI });
let roles: { leader: number; standby: number };
let pairsPerS: number;
let cpu: { leader: number; standby: number };
try {
  await stable(cluster, 3_000, 2_000);
  const [row] = await inSync(cluster, 30_000);
  const pidOf = (serverId: string | null): number => cluster.member(serverId).child.pid!;
  roles = { leader: pidOf(row!.holder), standby: pidOf(row!.standbyId) };
  const urls = cluster.members.map((m) => m.url);
  await committers(urls, 64, 2_000, "warm");
  const before = { leader: cpuMs(roles.leader), standby: cpuMs(roles.standby) };
  const run = rate === null ? await committers(urls, 64, seconds * 1_000, "profiled") : await pacedPairs(urls, rate, seconds * 1_000);
  cpu = { leader: cpuMs(roles.leader) - before.leader, standby: cpuMs(roles.standby) - before.standby };
  pairsPerS = run.pairs / run.elapsed;
  cpu = { leader: (cpu.leader * 1000) / run.pairs, standby: (cpu.standby * 1000) / run.pairs };
  if (!(await cluster.rows())[0]!.inSync) console.warn("the row no longer says in sync: the profile is not of the ack path");
} finally {
  await cluster.close();
}

mkdirSync(outDir, { recursive: true });
const load = (role: "leader" | "standby"): CpuProfile => {
  const file = readdirSync(profDir).find((f) => f.endsWith(".cpuprofile") && f.includes(`.${roles[role]}.`));
  if (file === undefined) throw new Error(`the ${role} (pid ${roles[role]}) wrote no .cpuprofile`);
  const target = join(outDir, `cluster-${label}-${role}.cpuprofile`);
  renameSync(join(profDir, file), target);
  return JSON.parse(readFileSync(target, "utf8")) as CpuProfile;
};
const leader = load("leader");
const standby = load("standby");
const markdown = [
  `### Cluster profile "${label}"`,
  "",
  `c64 lock + tryUnlock through a 3-server cluster (--shards 1, --replicas 1, in sync), ${seconds} s under the profilers, ${rate === null ? "flat out" : `paced to ${rate.toLocaleString("en-US")} pairs/s`}, ${Math.round(pairsPerS).toLocaleString("en-US")} pairs/s; CPU per grant: leader ${cpu.leader.toFixed(1)} µs, standby ${cpu.standby.toFixed(1)} µs (profiling slows both; compare shares). ${describeMachine()}, ${new Date().toISOString().slice(0, 16)}Z.`,
  "",
  table("Leader (`node --cpu-prof`, whole life):", topFrames(leader, 15)),
  areas("Leader by area:", leader),
  table("Standby (`node --cpu-prof`, whole life):", topFrames(standby, 12)),
  areas("Standby by area:", standby),
].join("\n");
writeFileSync(fileURLToPath(new URL(`../results/profile-cluster-${label}.md`, import.meta.url)), `${markdown}\n`);
console.log(markdown);
