import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

/** The built CLI (`pnpm build` first): the suite runs the server users run, in its own process. */
const CLI_PATH = fileURLToPath(new URL("../../../../server/dist/cli.js", import.meta.url));

/** A `leasehold-server` child process that has logged its `listening` line. */
export interface CliServer {
  /** Base URL to give `LockClient.http`. */
  readonly url: string;
  /** The child process. */
  readonly child: ChildProcess;
  /** Every JSON line the server logged so far. */
  readonly lines: readonly Record<string, unknown>[];
  /** SIGTERM, wait for the exit (SIGKILL after 10 s), remove the data directory; resolves the exit code. */
  stop(): Promise<number | null>;
}

/**
 * Start `node packages/server/dist/cli.js --port 0 --lease-ms <leaseMs>` with a scratch data
 * directory, and wait (up to 15 s) for its `listening` line. A separate process keeps the
 * server's lease timers away from the load generator's event loop, as in production.
 */
export async function startCliServer(leaseMs: number): Promise<CliServer> {
  const dataDir = mkdtempSync(join(tmpdir(), "leasehold-me-"));
  const args = [CLI_PATH, "--host", "127.0.0.1", "--port", "0", "--lease-ms", String(leaseMs), "--data-dir", dataDir, "--log-level", "info"];
  const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "pipe"] });
  const lines: Record<string, unknown>[] = [];
  let stderr = "";
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`leasehold-server: no listening line within 15 s; stderr: ${stderr}`)), 15_000);
    void exited.then((code) => reject(new Error(`leasehold-server exited with ${code} before listening; stderr: ${stderr}`)));
    createInterface({ input: child.stdout }).on("line", (line) => {
      let entry: Record<string, unknown>;
      try {
        entry = JSON.parse(line) as Record<string, unknown>;
      } catch {
        entry = { raw: line };
      }
      lines.push(entry);
      if (entry.msg === "listening" && typeof entry.url === "string") {
        clearTimeout(timer);
        resolve(entry.url);
      }
    });
  });
  return {
    url,
    child,
    lines,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      const kill = setTimeout(() => child.kill("SIGKILL"), 10_000);
      const code = await exited;
      clearTimeout(kill);
      rmSync(dataDir, { recursive: true, force: true });
      return code;
    },
  };
}
