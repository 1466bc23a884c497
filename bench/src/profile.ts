/**
 * `pnpm bench:profile [label] [seconds] [workload]`: profile the server's hot path (`node --cpu-prof`)
 * and the client's (the inspector's profiler) while a peers-suite workload runs lock + tryUnlock with
 * lock batching (`c64`, the default: 64 callers on own keys; `contended`: 64 callers on 8 keys; `c1`:
 * one caller), and print the top frames by self time of each (with `LEASEHOLD_PROFILE_AREAS=1`, also
 * self time by area: a leasehold package's directory, a dependency, Node's own modules) as Markdown
 * tables, also written to `bench/results/profile-<label>.md`, which `pnpm bench` includes in
 * docs/benchmarks.md ("Profiles"). The profiles themselves are kept in
 * `bench/results/profiles/<label>-{server,client}.cpuprofile` (git-ignored) for Chrome DevTools.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { leaseholdPeer } from "./peers/leasehold-peer.js";
import { runRound, type PeerWorkload } from "./peers/workloads.js";
import { byArea, topFrames, type CpuProfile, type Frame } from "./profile/top-frames.js";
import { describeMachine } from "./machine.js";
import { startServerProcess } from "./server-process.js";

const label = process.argv[2] ?? "current";
const seconds = Number(process.argv[3] ?? 5);
/** The peers suite's workload to profile: c64 (the default), contended or c1. */
const workload = (process.argv[4] ?? "c64") as PeerWorkload;
if (!["c64", "contended", "c1"].includes(workload)) throw new Error(`unknown workload ${workload}: c64, contended or c1`);
const outDir = fileURLToPath(new URL("../results/profiles/", import.meta.url));
const serverDir = mkdtempSync(join(tmpdir(), "leasehold-prof-"));

function table(title: string, frames: readonly Frame[]): string {
  const rows = frames.map((f) => `| ${f.selfPercent.toFixed(1)} | \`${f.frame.replace(/\|/g, "\\|")}\` |`);
  return [`${title}`, "", "| self % | function (file:line) |", "| ---: | --- |", ...rows, ""].join("\n");
}

function areas(title: string, profile: CpuProfile): string {
  const rows = byArea(profile).filter((a) => a.percent >= 0.5).map((a) => `| ${a.percent.toFixed(1)} | ${a.area} |`);
  return [`${title}`, "", "| self % | area |", "| ---: | --- |", ...rows, ""].join("\n");
}

const server = await startServerProcess({ nodeArgs: ["--cpu-prof", "--cpu-prof-dir", serverDir] });
const driver = leaseholdPeer("leasehold_async", server.url, "try", true);
// Warm up first, so the profile shows the steady state rather than compilation.
const warm = await driver.session();
await runRound(warm, workload, 2_000, { pairs: false, waits: false });
await warm.end();

const session = new Session();
session.connect();
await session.post("Profiler.enable");
await session.post("Profiler.start");
const peer = await driver.session();
const result = await runRound(peer, workload, seconds * 1_000, { pairs: false, waits: false });
await peer.end();
const { profile } = await session.post("Profiler.stop");
session.disconnect();
await server.stop();

mkdirSync(outDir, { recursive: true });
const serverFile = readdirSync(serverDir).find((f) => f.endsWith(".cpuprofile"));
if (serverFile === undefined) throw new Error("the server wrote no .cpuprofile");
renameSync(join(serverDir, serverFile), join(outDir, `${label}-server.cpuprofile`));
writeFileSync(join(outDir, `${label}-client.cpuprofile`), JSON.stringify(profile));
const serverProfile = JSON.parse(readFileSync(join(outDir, `${label}-server.cpuprofile`), "utf8")) as CpuProfile;

const rate = Math.round(result.pairs / result.seconds);
const markdown = [
  `### Profile "${label}"`,
  "",
  `${workload} lock + tryUnlock with lock batching, ${result.seconds.toFixed(1)} s under the profilers, ${rate.toLocaleString("en-US")} pairs/s (profiling slows both processes; compare shares, not rates). ${describeMachine()}, ${new Date().toISOString().slice(0, 10)}.`,
  "",
  table("Server (`node --cpu-prof`, whole run):", topFrames(serverProfile, 12)),
  table("Client (inspector profiler, measured round):", topFrames(profile as unknown as CpuProfile, 12)),
  ...(process.env.LEASEHOLD_PROFILE_AREAS === "1"
    ? [areas("Server by area:", serverProfile), areas("Client by area:", profile as unknown as CpuProfile)]
    : []),
].join("\n");
writeFileSync(fileURLToPath(new URL(`../results/profile-${label}.md`, import.meta.url)), `${markdown}\n`);
console.log(markdown);
