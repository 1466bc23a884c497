import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

/** The built CLI; the CLI tests run what users run, so `pnpm build` must come first. */
export const CLI_PATH = fileURLToPath(new URL("../../dist/cli.js", import.meta.url));

/** A CLI child process that logged its `listening` line. */
export interface CliProcess {
  readonly url: string;
  readonly child: ChildProcess;
  /** Every stdout line so far, parsed (non-JSON lines are kept as `{ raw }`). */
  readonly lines: Record<string, unknown>[];
  /** Settles when the process exits. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Start `node dist/cli.js ...args` and wait (up to 15 s) for `{"msg":"listening","url":...}`. */
export function startCli(args: readonly string[]): Promise<CliProcess> {
  const child = spawn(process.execPath, [CLI_PATH, ...args], { stdio: ["ignore", "pipe", "pipe"] });
  const lines: Record<string, unknown>[] = [];
  let stderr = "";
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal })),
  );
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      // Never left running: the caller has no handle on a process that did not start.
      child.kill("SIGKILL");
      reject(new Error(`no listening line within 15 s; stderr: ${stderr}`));
    }, 15_000);
    void exited.then(({ code }) => reject(new Error(`CLI exited with ${code} before listening; stderr: ${stderr}`)));
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
        resolve({ url: entry.url, child, lines, exited });
      }
    });
  });
}

/** Run the CLI to completion and collect its output. */
export function runCli(args: readonly string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [CLI_PATH, ...args], { stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) => child.once("close", (code) => resolve({ code, stdout, stderr })));
}
