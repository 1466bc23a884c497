import { ServerProcess } from "./server-process.js";

/** One process of the server: who it was and when it lived. */
export interface Incarnation {
  /** Its leader id (every lease it granted carries it). */
  readonly leaderId: string;
  /** Monotonic ms when its `listening` line arrived. */
  readonly listeningAt: number;
  /** Monotonic ms just before it was sent SIGKILL; undefined while it lives. */
  killedAt: number | undefined;
}

/** One outage: from the SIGKILL to the next process's `listening` line. */
export interface Outage {
  /** Monotonic ms just before SIGKILL. */
  readonly killedAt: number;
  /** Monotonic ms when the restarted process listened. */
  readonly listeningAt: number;
}

/**
 * The CLI server across SIGKILLs: the first process picks a port, every restart reuses that port
 * and the same data directory, as an operator restarting it in place would. Keeps every process's
 * leader id and lifetime so a history can say which process granted what.
 */
export class ServerIncarnations {
  readonly #dataDir: string | undefined;
  readonly #leaseMs: number;
  readonly #all: Incarnation[] = [];
  readonly #outages: Outage[] = [];
  readonly #processes: ServerProcess[] = [];
  #current: ServerProcess | undefined;

  private constructor(dataDir: string | undefined, leaseMs: number) {
    this.#dataDir = dataDir;
    this.#leaseMs = leaseMs;
  }

  /** Start the first process; `dataDir` undefined only for the negative control (numbers then restart at 1). */
  static async start(dataDir: string | undefined, leaseMs: number): Promise<ServerIncarnations> {
    const servers = new ServerIncarnations(dataDir, leaseMs);
    await servers.#spawn(0);
    return servers;
  }

  /** The live process (or the last one, while restarting). */
  get current(): ServerProcess {
    if (this.#current === undefined) throw new Error("no server process was started");
    return this.#current;
  }

  /** Base URL; stable across restarts. */
  get url(): string {
    return this.current.url;
  }

  /** Every process so far, in start order. */
  get incarnations(): readonly Incarnation[] {
    return this.#all;
  }

  /** Every outage so far. */
  get outages(): readonly Outage[] {
    return this.#outages;
  }

  /** Log lines at `error` or above of every process so far (each is a server bug). */
  errors(): Record<string, unknown>[] {
    return this.#processes.flatMap((p) => p.errors());
  }

  /** The process that announced `leaderId`, if any. */
  byLeader(leaderId: string): Incarnation | undefined {
    return this.#all.find((i) => i.leaderId === leaderId);
  }

  /** SIGKILL the live process, stay down for `downMs`, then start a new one on the same port and data dir. */
  async killAndRestart(downMs: number): Promise<Outage> {
    const victim = this.current;
    const record = this.#all[this.#all.length - 1] as Incarnation;
    const killedAt = performance.now();
    record.killedAt = killedAt;
    await victim.kill();
    await new Promise((r) => setTimeout(r, downMs));
    const next = await this.#spawn(victim.port);
    const outage = { killedAt, listeningAt: next.listeningAt };
    this.#outages.push(outage);
    return outage;
  }

  /** Graceful stop of the live process. */
  async stop(): Promise<void> {
    await this.#current?.stop();
  }

  /** SIGKILL whatever is running (cleanup after a failure). */
  async kill(): Promise<void> {
    await this.#current?.kill();
  }

  async #spawn(port: number): Promise<Incarnation> {
    const server = await ServerProcess.start({ port, dataDir: this.#dataDir, leaseMs: this.#leaseMs });
    const incarnation: Incarnation = { leaderId: server.leaderId, listeningAt: performance.now(), killedAt: undefined };
    this.#current = server;
    this.#processes.push(server);
    this.#all.push(incarnation);
    return incarnation;
  }
}
