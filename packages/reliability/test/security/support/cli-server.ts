import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

/** The built server CLI (`pnpm build` first), run exactly as operators run it. */
export const CLI_PATH = fileURLToPath(new URL("../../../../server/dist/cli.js", import.meta.url));

/** A running `node packages/server/dist/cli.js` child and everything it printed. */
export interface CliServer {
  /** The URL of its `listening` log line. */
  readonly url: string;
  readonly port: number;
  readonly child: ChildProcess;
  /** Every stdout line so far, exactly as printed. */
  readonly stdout: string[];
  /** Everything printed on stderr so far. */
  stderr(): string;
  /** SIGTERM, then resolve with the exit code once it exited (SIGKILL after 15 s). */
  stop(): Promise<number | null>;
}

/**
 * Start the CLI with `args` and wait (up to 15 s) for its `{"msg":"listening","url":…}` line.
 * Rejects if it exits first; the caller must `stop()` it.
 */
export function startCliServer(args: readonly string[]): Promise<CliServer> {
  const child = spawn(process.execPath, [CLI_PATH, ...args], { stdio: ["ignore", "pipe", "pipe"] });
  const stdout: string[] = [];
  let stderr = "";
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString("utf8")));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const stop = async (): Promise<number | null> => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
    const killer = setTimeout(() => child.kill("SIGKILL"), 15_000);
    const code = await exited;
    clearTimeout(killer);
    return code;
  };
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      void stop();
      reject(new Error(`the CLI printed no listening line within 15 s; stderr: ${stderr}`));
    }, 15_000);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`the CLI exited with ${String(code)} before listening; stderr: ${stderr}`));
    });
    createInterface({ input: child.stdout }).on("line", (line) => {
      stdout.push(line);
      let entry: { msg?: unknown; url?: unknown } = {};
      try {
        entry = JSON.parse(line) as typeof entry;
      } catch {
        return;
      }
      if (entry.msg === "listening" && typeof entry.url === "string") {
        clearTimeout(timer);
        const url = entry.url;
        resolve({ url, port: Number(new URL(url).port), child, stdout, stderr: () => stderr, stop });
      }
    });
  });
}
