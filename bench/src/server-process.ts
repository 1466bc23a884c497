import { spawn, type ChildProcess } from "node:child_process";
import { appendFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

/** A lock server running in a child process, as the CLI starts it. */
export interface ServerProcess {
  readonly url: string;
  readonly child: ChildProcess;
  stop(): Promise<void>;
}

const cli = fileURLToPath(new URL("../../packages/server/dist/cli.js", import.meta.url));

/**
 * Start `packages/server/dist/cli.js` on an ephemeral port (or `port`) and wait for its `listening`
 * line. `clusterArgs` starts a cluster member instead of a single server with a data directory;
 * `cli` starts another build's `cli.js` (an A/B comparison of two commits; default this one's).
 */
export async function startServerProcess(
  options: {
    leaseMs?: number;
    nodeArgs?: readonly string[] | undefined;
    clusterArgs?: readonly string[] | undefined;
    port?: number | undefined;
    cli?: string | undefined;
    /** CLI flags after all others (a later flag wins: `--log-level debug --unsafe-test-knobs` for a test knob). Default none. */
    extraArgs?: readonly string[] | undefined;
    /** Environment variables on top of this process's (a test knob's). Default none. */
    env?: Readonly<Record<string, string>> | undefined;
  } = {},
): Promise<ServerProcess> {
  const dataDir = mkdtempSync(join(tmpdir(), "leasehold-bench-"));
  // Cluster members (`clusterArgs`: `--cluster <conn>` and friends) keep their bounds in PostgreSQL, not a data directory.
  const store = options.clusterArgs === undefined ? ["--data-dir", dataDir] : [...options.clusterArgs];
  const args = [...(options.nodeArgs ?? []), options.cli ?? cli, "--host", "127.0.0.1", "--port", String(options.port ?? 0), ...store, "--log-level", "info"];
  if (options.leaseMs !== undefined) args.push("--lease-ms", String(options.leaseMs));
  args.push(...(options.extraArgs ?? []));
  const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "inherit"], env: options.env === undefined ? process.env : { ...process.env, ...options.env } });
  const listening = new Promise<string>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    // LEASEHOLD_BENCH_LOG_DIR keeps every server's log lines (one file per process) for diagnosis.
    const logDir = process.env.LEASEHOLD_BENCH_LOG_DIR;
    if (logDir !== undefined) lines.on("line", (line) => appendFileSync(join(logDir, `server-${child.pid}.log`), `${line}\n`));
    const timer = setTimeout(() => reject(new Error("server did not log listening within 15 s")), 15_000);
    child.once("exit", (code) => reject(new Error(`server exited with ${code} before listening`)));
    lines.on("line", (line) => {
      try {
        const entry = JSON.parse(line) as { msg?: string; url?: string };
        if (entry.msg === "listening" && entry.url) {
          clearTimeout(timer);
          resolve(entry.url);
        }
      } catch {
        // not a JSON line: ignore
      }
    });
  });
  let url: string;
  try {
    url = await listening;
  } catch (err) {
    // Never leave a child behind: one that did not start in time would keep the benchmark alive.
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    rmSync(dataDir, { recursive: true, force: true });
    throw err;
  }
  return {
    url,
    child,
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once("exit", r));
        child.kill("SIGTERM");
        await exited;
      }
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
