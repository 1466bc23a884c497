/**
 * `node bench/dist/syscalls-per-pair.js [rate] [seconds] [label]`: syscalls, context switches and
 * CPU per lock + tryUnlock pair of each server process, at a paced load: a single server, the echo
 * floor (a 3-server `--replicas 1` cluster whose standby connection goes to a TCP echo server,
 * `LEASEHOLD_TEST_ECHO_STANDBY_PORT`) and the real `--replicas 1` cluster (leader and standby), one
 * after the other, each driven by the c64 workload's callers paced to `rate` pairs/s (default
 * 8,000) for `seconds` (default 6). Each server process is counted by `perf stat -e
 * raw_syscalls:sys_enter,context-switches -p <pid>` (every thread, a kernel counter: it barely
 * slows the process, unlike `strace`), so the figures hold on a busy machine where CPU times do
 * not. With `LEASEHOLD_SYSCALL_STRACE=1` each process is also traced by `strace -c -f` for a
 * second round, and its syscalls per pair are broken down by name (strace slows the process a lot:
 * read the breakdown, not its rate). Prints Markdown and writes it to
 * `bench/results/syscalls-per-pair-<label>.md`. `LEASEHOLD_BENCH_CLI` runs another build's servers.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { inSync, stable, startCluster, type BenchCluster } from "./bench-cluster.js";
import { startEchoServer } from "./echo-server-process.js";
import { describeMachine } from "./machine.js";
import { pacedRound } from "./peers/paced-round.js";
import { cpuUsOf } from "./process-cpu.js";
import { startServerProcess } from "./server-process.js";
import { leaseholdSession } from "./same-promise-setups.js";

const rate = Number(process.argv[2] ?? 8_000);
const seconds = Number(process.argv[3] ?? 6);
const label = process.argv[4] ?? "current";
const withStrace = process.env.LEASEHOLD_SYSCALL_STRACE === "1";
/** Another build's `packages/server/dist/cli.js` for every server (an A/B of two commits in one sitting); default this one's. */
const cli = process.env.LEASEHOLD_BENCH_CLI;

/** One server process measured: its role and pid. */
interface Role {
  readonly role: string;
  readonly pid: number;
}

/** What one process did over a round, per pair. */
interface Counted {
  readonly role: string;
  readonly syscalls: number;
  readonly switches: number;
  readonly cpuUs: number;
  /** strace's calls per pair by syscall name, when traced. */
  readonly bySyscall: ReadonlyMap<string, number> | null;
}

/** A child process that counts until SIGINT, answering its stderr (perf and strace report there). */
function attach(command: string, args: readonly string[]): { readonly child: ChildProcess; stop(): Promise<string> } {
  const child = spawn(command, args, { stdio: ["ignore", "ignore", "pipe"] });
  let text = "";
  child.stderr!.on("data", (d: Buffer) => (text += d.toString("utf8")));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  return {
    child,
    async stop() {
      child.kill("SIGINT");
      await exited;
      return text;
    },
  };
}

/** `perf stat`'s count of `event` in its report. */
function perfCount(report: string, event: string): number {
  const line = report.split("\n").find((l) => l.includes(event));
  const match = line === undefined ? null : /^\s*([\d,]+)\s/.exec(line);
  if (match === null) throw new Error(`perf stat reported no ${event}:\n${report}`);
  return Number(match[1]!.replace(/,/g, ""));
}

/** strace -c's table as calls by syscall name. */
function straceCalls(report: string): Map<string, number> {
  const calls = new Map<string, number>();
  for (const line of report.split("\n")) {
    const m = /^\s*[\d.]+\s+[\d.]+\s+\d+\s+(\d+)\s+(?:\d+\s+)?(\w+)\s*$/.exec(line);
    if (m !== null && m[2] !== "total") calls.set(m[2]!, Number(m[1]));
  }
  return calls;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Drive `urls` at the paced rate while every process of `roles` is counted. */
async function measure(urls: readonly string[], roles: readonly Role[], round: string): Promise<Counted[]> {
  // Warm up (JIT, connections) at the same rate, uncounted.
  const warm = leaseholdSession(urls, "try", `${round}-warm`);
  await pacedRound(warm, rate, 2_000);
  await warm.end();
  const perfs = roles.map((r) => attach("perf", ["stat", "-e", "raw_syscalls:sys_enter,context-switches", "-p", String(r.pid)]));
  await sleep(300);
  const cpuBefore = roles.map((r) => cpuUsOf(r.pid));
  const s = leaseholdSession(urls, "try", round);
  const run = await pacedRound(s, rate, seconds * 1_000);
  const cpuAfter = roles.map((r) => cpuUsOf(r.pid));
  const reports = await Promise.all(perfs.map((p) => p.stop()));
  await s.end();
  let traced: (Map<string, number> | null)[] = roles.map(() => null);
  let tracedPairs = 1;
  if (withStrace) {
    const straces = roles.map((r) => attach("strace", ["-c", "-f", "-p", String(r.pid)]));
    await sleep(500);
    const t = leaseholdSession(urls, "try", `${round}-strace`);
    const tracedRun = await pacedRound(t, rate, seconds * 1_000);
    tracedPairs = tracedRun.pairs;
    traced = (await Promise.all(straces.map((x) => x.stop()))).map(straceCalls);
    await t.end();
  }
  const pairs = run.pairs;
  if (run.skipped > 0) console.warn(`${round}: ${run.skipped} slots skipped (the setup did not keep ${rate} pairs/s)`);
  return roles.map((r, i) => ({
    role: r.role,
    syscalls: perfCount(reports[i]!, "raw_syscalls:sys_enter") / pairs,
    switches: perfCount(reports[i]!, "context-switches") / pairs,
    cpuUs: (cpuAfter[i]! - cpuBefore[i]!) / pairs,
    bySyscall: traced[i] === null ? null : new Map([...traced[i]!].map(([k, v]) => [k, v / tracedPairs])),
  }));
}

const rows: { setup: string; counted: Counted[] }[] = [];
const stops: (() => Promise<void>)[] = [];
try {
  const single = await startServerProcess({ leaseMs: 2_000, cli });
  stops.push(() => single.stop());
  rows.push({ setup: "single server", counted: await measure([single.url], [{ role: "server", pid: single.child.pid! }], "single") });
  await single.stop();
  stops.pop();

  const echoServer = await startEchoServer();
  stops.push(() => echoServer.stop());
  const echo = await startCluster(3, ["--shards", "1", "--lease-ms", "2000", "--replicas", "1"], { cli, extraArgs: ["--unsafe-test-knobs"], env: { LEASEHOLD_TEST_ECHO_STANDBY_PORT: String(echoServer.port) } });
  stops.push(() => echo.close());
  await stable(echo, 3_000, 2_000);
  const [echoRow] = await inSync(echo, 30_000);
  const echoRoles = [
    { role: "leader", pid: echo.member(echoRow!.holder).child.pid! },
    { role: "echo server", pid: echoServer.child.pid! },
  ];
  rows.push({ setup: "cluster, echo standby (floor)", counted: await measure(echo.members.map((m) => m.url), echoRoles, "echo") });
  await echo.close();
  await echoServer.stop();
  stops.splice(0);

  const r1: BenchCluster = await startCluster(3, ["--shards", "1", "--lease-ms", "2000", "--replicas", "1"], { cli });
  stops.push(() => r1.close());
  await stable(r1, 3_000, 2_000);
  const [row] = await inSync(r1, 30_000);
  const r1Roles = [
    { role: "leader", pid: r1.member(row!.holder).child.pid! },
    { role: "standby", pid: r1.member(row!.standbyId).child.pid! },
  ];
  rows.push({ setup: "cluster --replicas 1", counted: await measure(r1.members.map((m) => m.url), r1Roles, "r1") });
  if (!(await r1.rows())[0]!.inSync) console.warn("the row no longer says in sync: the r1 figures are not of the ack path");
} finally {
  for (const stop of stops.reverse()) await stop().catch(() => undefined);
}

const lines = [
  `### Syscalls per pair "${label}"`,
  "",
  `c64 lock + tryUnlock paced to ${rate.toLocaleString("en-US")} pairs/s for ${seconds} s per setup; \`perf stat -e raw_syscalls:sys_enter,context-switches -p <pid>\` per server process (every thread). CPU from /proc (noise on a busy machine). ${describeMachine()}, ${new Date().toISOString().slice(0, 16)}Z.`,
  "",
  "| setup | process | syscalls / pair | context switches / pair | CPU µs / pair |",
  "| --- | --- | ---: | ---: | ---: |",
  ...rows.flatMap((r) => r.counted.map((c) => `| ${r.setup} | ${c.role} | ${c.syscalls.toFixed(2)} | ${c.switches.toFixed(2)} | ${c.cpuUs.toFixed(1)} |`)),
  "",
];
if (withStrace) {
  for (const r of rows) {
    for (const c of r.counted) {
      const top = [...(c.bySyscall ?? [])].sort((a, b) => b[1] - a[1]).filter(([, v]) => v >= 0.01);
      lines.push(`${r.setup}, ${c.role} (strace -c -f, calls per pair): ${top.map(([k, v]) => `${k} ${v.toFixed(2)}`).join(", ")}`, "");
    }
  }
}
const markdown = lines.join("\n");
writeFileSync(fileURLToPath(new URL(`../results/syscalls-per-pair-${label}.md`, import.meta.url)), `${markdown}\n`);
console.log(markdown);
