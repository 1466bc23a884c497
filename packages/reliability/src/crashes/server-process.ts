import { startCliServer, type CliServer } from "../cli-server.js";

/** How to start the CLI server; each field maps to a flag of `leasehold-server`. */
export interface ServerProcessOptions {
  /** `--port`; 0 (default) picks an ephemeral one, then read {@link ServerProcess.port}. */
  readonly port?: number | undefined;
  /**
   * `--data-dir`: where the timestamp bound survives a SIGKILL. Undefined starts the server without
   * one (numbers restart at 1), which only the negative control does.
   */
  readonly dataDir: string | undefined;
  /** `--lease-ms`. Default: the server's (10,000). */
  readonly leaseMs?: number | undefined;
  /** `--max-connections`. Default: the server's (10,000). */
  readonly maxConnections?: number | undefined;
  /** How long to wait for the `listening` line, in ms. Default 15,000 (a loaded 2-core machine). */
  readonly startTimeoutMs?: number | undefined;
}

/**
 * `node packages/server/dist/cli.js` as a child process, started and killed for real (a
 * {@link CliServer} with the crash scenarios' flags). Its `listening` line gives the URL and the
 * leader id of this incarnation.
 */
export class ServerProcess {
  readonly #server: CliServer;

  private constructor(server: CliServer) {
    this.#server = server;
  }

  /** Base URL, e.g. `http://127.0.0.1:41234`. */
  get url(): string {
    return this.#server.url;
  }

  /** The TCP port it listens on (pass it to the next incarnation to restart "in place"). */
  get port(): number {
    return this.#server.port;
  }

  /** The leader id this process announced; every lease it grants carries it. */
  get leaderId(): string {
    return this.#server.leaderId;
  }

  /** OS process id (for `/proc/<pid>/status`). */
  get pid(): number {
    return this.#server.pid;
  }

  /** Resolves with the exit code (or signal name) once the process has exited. */
  get exited(): Promise<number | string> {
    return this.#server.exited;
  }

  /** Log lines at `warn` or above, as parsed JSON (lease lapses and errors). */
  get warnings(): Record<string, unknown>[] {
    return this.#server.lines.filter((line) => typeof line.level === "number" && line.level >= 40);
  }

  /** Spawn the server and resolve once it listens; rejects (and kills it) if it does not within the timeout. */
  static async start(options: ServerProcessOptions): Promise<ServerProcess> {
    const args = ["--host", "127.0.0.1", "--port", String(options.port ?? 0), "--log-level", "info"];
    if (options.dataDir !== undefined) args.push("--data-dir", options.dataDir);
    if (options.leaseMs !== undefined) args.push("--lease-ms", String(options.leaseMs));
    if (options.maxConnections !== undefined) args.push("--max-connections", String(options.maxConnections));
    const startTimeoutMs = options.startTimeoutMs;
    return new ServerProcess(await startCliServer(args, startTimeoutMs === undefined ? {} : { startTimeoutMs }));
  }

  /** Its log lines at `error` or above (a 500 answered, a failed stop): each is a server bug. */
  errors(): Record<string, unknown>[] {
    return this.#server.lines.filter((line) => typeof line.level === "number" && line.level >= 50);
  }

  /** SIGKILL: no graceful stop, no bound persisted beyond what is already on disk. Resolves once it is gone. */
  kill(): Promise<void> {
    return this.#server.kill();
  }

  /** SIGTERM (graceful stop), then SIGKILL if it has not exited within `timeoutMs`. */
  async stop(timeoutMs = 10_000): Promise<void> {
    await this.#server.stop(timeoutMs);
  }
}
