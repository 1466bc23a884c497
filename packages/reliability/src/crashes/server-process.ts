import { spawn, type ChildProcess } from "node:child_process";
import { onJsonLines } from "./json-lines.js";
import { SERVER_CLI } from "./paths.js";

/** How to start the CLI server; each field maps to a flag of `leasehold-server`. */
export interface ServerProcessOptions {
  /** `--port`; 0 (default) picks an ephemeral one, then read {@link ServerProcess.port}. */
  readonly port?: number;
  /**
   * `--data-dir`: where the timestamp bound survives a SIGKILL. Undefined starts the server without
   * one (numbers restart at 1), which only the negative control does.
   */
  readonly dataDir: string | undefined;
  /** `--lease-ms`. Default: the server's (10,000). */
  readonly leaseMs?: number;
  /** `--max-connections`. Default: the server's (10,000). */
  readonly maxConnections?: number;
  /** How long to wait for the `listening` line, in ms. Default 15,000 (a loaded 2-core machine). */
  readonly startTimeoutMs?: number;
}

/**
 * `node packages/server/dist/cli.js` as a child process, started and killed for real. Its pino
 * lines are parsed; the `listening` line gives the URL and the leader id of this incarnation.
 */
export class ServerProcess {
  /** Base URL, e.g. `http://127.0.0.1:41234`. */
  readonly url: string;
  /** The TCP port it listens on (pass it to the next incarnation to restart "in place"). */
  readonly port: number;
  /** The leader id this process announced; every lease it grants carries it. */
  readonly leaderId: string;
  /** OS process id (for `/proc/<pid>/status`). */
  readonly pid: number;
  /** Resolves with the exit code (or signal name) once the process has exited. */
  readonly exited: Promise<number | string>;
  /** Log lines at `warn` or above, as parsed JSON (lease lapses and errors). */
  readonly warnings: Record<string, unknown>[];
  readonly #child: ChildProcess;

  private constructor(child: ChildProcess, url: string, leaderId: string, exited: Promise<number | string>, warnings: Record<string, unknown>[]) {
    this.#child = child;
    this.url = url;
    this.port = Number(new URL(url).port);
    this.leaderId = leaderId;
    this.pid = child.pid as number;
    this.exited = exited;
    this.warnings = warnings;
  }

  /** Spawn the server and resolve once it listens; rejects (and kills it) if it does not within the timeout. */
  static start(options: ServerProcessOptions): Promise<ServerProcess> {
    const args = [SERVER_CLI, "--host", "127.0.0.1", "--port", String(options.port ?? 0), "--log-level", "info"];
    if (options.dataDir !== undefined) args.push("--data-dir", options.dataDir);
    if (options.leaseMs !== undefined) args.push("--lease-ms", String(options.leaseMs));
    if (options.maxConnections !== undefined) args.push("--max-connections", String(options.maxConnections));
    const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "pipe"] });
    const exited = new Promise<number | string>((resolve) => child.once("exit", (code, signal) => resolve(code ?? signal ?? "unknown")));
    const warnings: Record<string, unknown>[] = [];
    let stderr = "";
    child.stderr?.setEncoding("utf8");
    child.stderr?.on("data", (chunk: string) => {
      if (stderr.length < 20_000) stderr += chunk;
    });
    return new Promise<ServerProcess>((resolve, reject) => {
      const timer = setTimeout(() => {
        child.kill("SIGKILL");
        reject(new Error(`the server did not listen within ${options.startTimeoutMs ?? 15_000} ms; stderr: ${stderr}`));
      }, options.startTimeoutMs ?? 15_000);
      void exited.then((code) => {
        clearTimeout(timer);
        reject(new Error(`the server exited (${code}) before listening; stderr: ${stderr}`));
      });
      onJsonLines(child.stdout!, (line) => {
        if (line.msg === "listening" && typeof line.url === "string" && typeof line.leaderId === "string") {
          clearTimeout(timer);
          resolve(new ServerProcess(child, line.url, line.leaderId, exited, warnings));
        } else if (typeof line.level === "number" && line.level >= 40) {
          warnings.push(line);
        }
      });
    });
  }

  /** Its log lines at `error` or above (a 500 answered, a failed stop): each is a server bug. */
  errors(): Record<string, unknown>[] {
    return this.warnings.filter((line) => typeof line.level === "number" && line.level >= 50);
  }

  /** SIGKILL: no graceful stop, no bound persisted beyond what is already on disk. Resolves once it is gone. */
  async kill(): Promise<void> {
    if (this.#child.exitCode === null && this.#child.signalCode === null) this.#child.kill("SIGKILL");
    await this.exited;
  }

  /** SIGTERM (graceful stop), then SIGKILL if it has not exited within `timeoutMs`. */
  async stop(timeoutMs = 10_000): Promise<void> {
    if (this.#child.exitCode !== null || this.#child.signalCode !== null) return;
    this.#child.kill("SIGTERM");
    const timer = setTimeout(() => this.#child.kill("SIGKILL"), timeoutMs);
    await this.exited;
    clearTimeout(timer);
  }
}
