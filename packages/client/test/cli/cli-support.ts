import { spawn, type ChildProcess } from "node:child_process";
import { readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

/** The built `leasehold` bin and the built server CLI: these tests run what users run. */
export const LEASEHOLD_BIN = fileURLToPath(new URL("../../dist/cli/leasehold.js", import.meta.url));
export const SERVER_CLI = fileURLToPath(new URL("../../../server/dist/cli.js", import.meta.url));

/** A spawned process with its output collected as it arrives. */
export interface Spawned {
  readonly child: ChildProcess;
  readonly stdout: () => string;
  readonly stderr: () => string;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Resolves when a stdout line equal to `line` has been printed (rejects after `ms`). */
  waitForLine(line: string, ms?: number): Promise<void>;
}

const spawned = new Set<ChildProcess>();

/**
 * Kill (SIGKILL) every process {@link spawnNode} started that is still running, and every pid
 * listed in `pidFiles` (the commands they ran): a failed test must not leave holders behind.
 */
export function killLeftovers(pidFiles: readonly string[] = []): void {
  for (const child of spawned) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  spawned.clear();
  for (const file of pidFiles) {
    try {
      const pid = Number(readFileSync(file, "utf8"));
      // Only the command that wrote this file (its argv names the file): never a reused pid.
      if (readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(file)) process.kill(pid, "SIGKILL");
    } catch {
      // Gone already, or never written.
    }
    rmSync(file, { force: true });
  }
}

/** Spawn `node <script> ...args`, collecting stdout and stderr. */
export function spawnNode(script: string, args: readonly string[], env: NodeJS.ProcessEnv = {}): Spawned {
  const child = spawn(process.execPath, [script, ...args], { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, ...env } });
  spawned.add(child);
  let out = "";
  let err = "";
  const lines: string[] = [];
  const waiters: { line: string; resolve: () => void }[] = [];
  child.stderr!.on("data", (d: Buffer) => (err += d.toString()));
  child.stdout!.on("data", (d: Buffer) => (out += d.toString()));
  createInterface({ input: child.stdout! }).on("line", (line) => {
    lines.push(line);
    for (const w of waiters.filter((w) => w.line === line)) w.resolve();
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("close", (code, signal) => resolve({ code, signal })),
  );
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    exited,
    waitForLine: (line, ms = 10_000) =>
      new Promise<void>((resolve, reject) => {
        if (lines.includes(line)) return resolve();
        const timer = setTimeout(() => reject(new Error(`no line ${JSON.stringify(line)} within ${ms} ms; stdout: ${out}; stderr: ${err}`)), ms);
        waiters.push({ line, resolve: () => (clearTimeout(timer), resolve()) });
      }),
  };
}

/** Run `leasehold ...args` to completion. */
export async function runLeasehold(args: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const p = spawnNode(LEASEHOLD_BIN, args, env);
  const { code } = await p.exited;
  return { code, stdout: p.stdout(), stderr: p.stderr() };
}

/** A running server CLI and its URL, from its `listening` log line. */
export interface ServerProcess {
  readonly url: string;
  readonly child: ChildProcess;
  stop(): Promise<void>;
}

/** Start `node packages/server/dist/cli.js --port 0 ...args` and wait for `listening`. */
export function startServerCli(args: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<ServerProcess> {
  const child = spawn(process.execPath, [SERVER_CLI, "--host", "127.0.0.1", "--port", "0", ...args], {
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, ...env },
  });
  let stderr = "";
  child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
    await exited;
  };
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server printed no listening line within 15 s; stderr: ${stderr}`)), 15_000);
    void exited.then(() => reject(new Error(`server exited before listening; stderr: ${stderr}`)));
    createInterface({ input: child.stdout! }).on("line", (line) => {
      if (!line.includes('"listening"')) return;
      const entry = JSON.parse(line) as { url?: unknown };
      if (typeof entry.url !== "string") return;
      clearTimeout(timer);
      resolve({ url: entry.url, child, stop });
    });
  });
}

/** Whether a process with this pid still exists. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The `*.pid` files in `dir`, for {@link killLeftovers}. */
export function pidFilesIn(dir: string): string[] {
  return readdirSync(dir)
    .filter((name) => name.endsWith(".pid"))
    .map((name) => join(dir, name));
}
