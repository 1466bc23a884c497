import { startCliServer, type CliServer } from "../cli-server.js";
import { startFaultProxy, type FaultProxy } from "../fault-proxy/fault-proxy.js";
import { deriveSeed } from "../seeded-random.js";
import { PG_URL, type RunSchema } from "./pg-run-schema.js";

/** Settings every member of a test cluster starts with. */
export interface MemberSettings {
  readonly leaderLeaseMs: number;
  readonly shards: number;
  readonly leaseMs: number;
  /** Extra environment (the negative controls' `LEASEHOLD_TEST_BREAK`). Default none. */
  readonly env?: Readonly<Record<string, string>> | undefined;
  /**
   * When given, member i's server id is `<prefix><i>-<incarnation>` (`--server-id`): members then sort
   * by index, so the first started is first in id order and, with one shard, keeps it (its share
   * is the one shard) instead of handing it over once the others join. Default: the server's own
   * random id.
   */
  readonly serverIdPrefix?: string | undefined;
  /**
   * With {@link serverIdPrefix}: member i's server id is `<prefix><i>` on every incarnation, as an
   * operator restarts a server in place (the rolling restart of the standby faults). Default false:
   * each incarnation gets an id of its own, so the members keep sorting by index after restarts.
   */
  readonly keepServerId?: boolean | undefined;
  /**
   * `--replicas`. Default unset (the server's default: a standby per shard). The controls of the
   * leaderless paths (lease-wait, epoch fence, gate) set 0: an in-sync standby would take the shard
   * over with its table and the same `leaderId`, which is not the path they are about.
   */
  readonly replicas?: 0 | 1 | undefined;
}

/**
 * One server of the test cluster: a CLI process in test mode (`--log-level debug`, so it logs its
 * serve intervals) reaching PostgreSQL through its own seeded fault proxy. It keeps its port across
 * restarts, so clients' `baseUrls` stay right; every incarnation's log lines are kept.
 */
export class ClusterMember {
  /** Every process this member has run, oldest first (their lines feed the serve-interval check). */
  readonly incarnations: CliServer[] = [];
  port = 0;
  /** Starts that exited with "could not start" and were tried again (0 expected: see {@link restart}). */
  startRetries = 0;

  private constructor(
    readonly index: number,
    readonly proxy: FaultProxy,
    readonly applicationName: string,
    private readonly schema: RunSchema,
    private readonly settings: MemberSettings,
  ) {}

  /** Start member `index`: its proxy to PostgreSQL (seeded from `seed`), then its server. */
  static async start(index: number, seed: number, schema: RunSchema, settings: MemberSettings): Promise<ClusterMember> {
    const proxy = await startFaultProxy({
      target: { host: new URL(PG_URL).hostname, port: Number(new URL(PG_URL).port || 5432) },
      seed: deriveSeed(seed, 100 + index),
      toServer: { drop: 1 },
      toClient: { drop: 1 },
    });
    // Faults are off except while a blackhole is injected: `drop` at rate 1 swallows everything.
    proxy.setFaults(false);
    const member = new ClusterMember(index, proxy, `${schema.name}_s${index}`, schema, settings);
    await member.restart();
    return member;
  }

  /** The `--server-id` the next incarnation starts with (`undefined`: the server picks its own). */
  get serverId(): string | undefined {
    const { serverIdPrefix, keepServerId } = this.settings;
    if (serverIdPrefix === undefined) return undefined;
    return keepServerId === true ? `${serverIdPrefix}${this.index}` : `${serverIdPrefix}${this.index}-${this.incarnations.length + 1}`;
  }

  /** The running process (the latest incarnation). */
  get server(): CliServer {
    const s = this.incarnations.at(-1);
    if (s === undefined) throw new Error(`member ${this.index} never started`);
    return s;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** True while the latest incarnation has not exited. */
  get alive(): boolean {
    const child = this.server.child;
    return child.exitCode === null && child.signalCode === null;
  }

  /**
   * Start a new incarnation on the member's port (port 0 the first time). A server no longer exits
   * when PostgreSQL is slow or unreachable at start (it listens, answers 503 and keeps joining), so
   * {@link startRetries} should stay 0; the retry (up to 5 times, on "could not start") is kept for
   * what can still end a start, such as the member's port taken meanwhile, and so that a non-zero
   * count in the report shows a regression.
   */
  async restart(): Promise<void> {
    const args = this.args(this.port, this.applicationName, this.serverId);
    const { env } = this.settings;
    for (let attempt = 1; ; attempt++) {
      try {
        const server = await startCliServer(args, { startTimeoutMs: 30_000, env });
        this.port = server.port;
        this.incarnations.push(server);
        return;
      } catch (err) {
        if (attempt === 5 || !(err instanceof Error) || !err.message.includes("could not start")) throw err;
        this.startRetries++;
        await new Promise((r) => setTimeout(r, 200));
      }
    }
  }

  /**
   * Start a second process with this member's settings and `serverId` (the running process's
   * `--server-id`), on a port of its own, through this member's proxy under application name
   * `<member's>_dup`: the duplicate-server-id fault. Not one of the member's incarnations: the
   * caller stops it.
   */
  startDuplicate(serverId: string): Promise<CliServer> {
    return startCliServer(this.args(0, `${this.applicationName}_dup`, serverId), { startTimeoutMs: 30_000, env: this.settings.env });
  }

  private args(port: number, applicationName: string, serverId: string | undefined): string[] {
    const { leaderLeaseMs, shards, leaseMs, env } = this.settings;
    return [
      "--host", "127.0.0.1",
      "--port", String(port),
      "--cluster", this.schema.connectionString(this.proxy.port, applicationName),
      "--leader-lease-ms", String(leaderLeaseMs),
      "--shards", String(shards),
      "--lease-ms", String(leaseMs),
      "--log-level", "debug",
      // The negative controls' LEASEHOLD_TEST_* variables act only with this flag.
      ...(env === undefined ? [] : ["--unsafe-test-knobs"]),
      ...(serverId === undefined ? [] : ["--server-id", serverId]),
      ...(this.settings.replicas === undefined ? [] : ["--replicas", String(this.settings.replicas)]),
    ];
  }

  /** Every JSON log line of every incarnation. */
  lines(): Record<string, unknown>[] {
    return this.incarnations.flatMap((s) => s.lines);
  }

  /** SIGCONT (in case it is stopped) and SIGKILL the process, then close the proxy. */
  async close(): Promise<void> {
    for (const s of this.incarnations) {
      s.child.kill("SIGCONT");
      await s.kill();
    }
    await this.proxy.close();
  }
}

/**
 * Start members 0…`count − 1` over `schema` at once, member i with `--server-id <prefix><i>` on
 * every incarnation (restarted in place, as an operator does), every one with `LEASEHOLD_TEST_BREAK`
 * set to `testBreak` when given (a negative control).
 */
export function startFixedIdMembers(
  count: number,
  seed: number,
  schema: RunSchema,
  settings: Pick<MemberSettings, "leaderLeaseMs" | "shards" | "leaseMs">,
  prefix: string,
  testBreak?: string,
): Promise<ClusterMember[]> {
  const env = testBreak === undefined ? undefined : { LEASEHOLD_TEST_BREAK: testBreak };
  const all: MemberSettings = { leaderLeaseMs: settings.leaderLeaseMs, shards: settings.shards, leaseMs: settings.leaseMs, env, serverIdPrefix: prefix, keepServerId: true };
  return Promise.all(Array.from({ length: count }, (_, i) => ClusterMember.start(i, seed, schema, all)));
}
