import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

/**
 * The lock server's CLI as `pnpm build` leaves it: the suite runs the server operators run, in its
 * own process. The same relative path works from `src/` (tests) and `dist/` (compiled children).
 */
export const SERVER_CLI = fileURLToPath(new URL("../../server/dist/cli.js", import.meta.url));

/** A `node packages/server/dist/cli.js` child that has logged its `listening` line. */
export interface CliServer {
  /** Base URL from the `listening` line, e.g. `http://127.0.0.1:41234`. */
  readonly url: string;
  /** The TCP port it listens on (pass it to a restarted server to come back "in place"). */
  readonly port: number;
  /** The leader id this process announced; every lease it grants carries it. */
  readonly leaderId: string;
  /** OS process id (for `/proc/<pid>/status`). */
  readonly pid: number;
  readonly child: ChildProcess;
  /** Every stdout line so far, exactly as printed. */
  readonly stdout: string[];
  /** The stdout lines that are JSON objects (pino's log lines), parsed, in order. */
  readonly lines: Record<string, unknown>[];
  /** Everything printed on stderr so far (the first 20,000 characters). */
  stderr(): string;
  /** Resolves with the exit code, or the signal's name, once the process has exited. */
  readonly exited: Promise<number | string>;
  /** SIGTERM (graceful stop), SIGKILL if it has not exited within `timeoutMs` (default 10,000); resolves what `exited` does. */
  stop(timeoutMs?: number): Promise<number | string>;
  /** SIGKILL: no graceful stop. Resolves once it is gone. */
  kill(): Promise<void>;
}

/**
 * Start the CLI with `args` and resolve once its `{"msg":"listening","url":…}` line arrives. Rejects
 * (and SIGKILLs it) when that takes longer than `startTimeoutMs` (default 15,000: a loaded 2-core
 * machine), or if it exits first. `env` adds variables to the inherited environment (default none).
 */
export function startCliServer(
  args: readonly string[],
  options: { readonly startTimeoutMs?: number | undefined; readonly env?: Readonly<Record<string, string>> | undefined } = {},
): Promise<CliServer> {
  const startTimeoutMs = options.startTimeoutMs ?? 15_000;
  const env = options.env === undefined ? process.env : { ...process.env, ...options.env };
  const child = spawn(process.execPath, [SERVER_CLI, ...args], { stdio: ["ignore", "pipe", "pipe"], env });
  const stdout: string[] = [];
  const lines: Record<string, unknown>[] = [];
  let stderr = "";
  child.stderr.setEncoding("utf8");
  child.stderr.on("data", (chunk: string) => {
    if (stderr.length < 20_000) stderr += chunk;
  });
  const exited = new Promise<number | string>((resolve) => child.once("exit", (code, signal) => resolve(code ?? signal ?? "unknown")));
  const running = (): boolean => child.exitCode === null && child.signalCode === null;
  const stop = async (timeoutMs = 10_000): Promise<number | string> => {
    if (running()) child.kill("SIGTERM");
    const killer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    const code = await exited;
    clearTimeout(killer);
    return code;
  };
  const kill = async (): Promise<void> => {
    if (running()) child.kill("SIGKILL");
    await exited;
  };
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`the server did not log listening within ${startTimeoutMs} ms; stderr: ${stderr}`));
    }, startTimeoutMs);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`the server exited (${code}) before listening; stderr: ${stderr}; last stdout: ${stdout.slice(-3).join("\n")}`));
    });
    createInterface({ input: child.stdout }).on("line", (line) => {
      stdout.push(line);
      let entry: unknown;
      try {
        entry = JSON.parse(line);
      } catch {
        return;
      }
      if (typeof entry !== "object" || entry === null || Array.isArray(entry)) return;
      const record = entry as Record<string, unknown>;
      lines.push(record);
      if (record.msg === "listening" && typeof record.url === "string") {
        clearTimeout(timer);
        const url = record.url;
        const leaderId = typeof record.leaderId === "string" ? record.leaderId : "";
        resolve({ url, port: Number(new URL(url).port), leaderId, pid: child.pid as number, child, stdout, lines, stderr: () => stderr, exited, stop, kill });
      }
    });
  });
}
