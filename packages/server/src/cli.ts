#!/usr/bin/env node
/**
 * `leasehold-server`: the standalone lock server. Parses flags, starts {@link startServer}, logs
 * pino JSON lines to stdout, and stops gracefully on SIGTERM or SIGINT (exit 0).
 */
import { parseArgs } from "node:util";
import { LIMITS } from "@leasehold/protocol";
import { pino } from "pino";
import type { AuthTable } from "./http/auth-table.js";
import { AUTH_TOKENS_ENV, loadAuthTable } from "./http/load-auth-table.js";
import { startServer } from "./start-server.js";
import { VERSION } from "./version.js";

/** Default TCP port of the standalone server (the embedding API defaults to an ephemeral port). */
const DEFAULT_CLI_PORT = 7878;

const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;

/** Settings parsed from the command line. */
interface CliOptions {
  readonly host: string;
  readonly port: number;
  readonly dataDir: string | undefined;
  readonly leaseMs: number;
  readonly logLevel: (typeof LOG_LEVELS)[number];
  readonly authFile: string | undefined;
  readonly maxConnections: number;
  readonly maxWaitingPerNamespace: number;
  /** How long a lock watch lasts without being registered again, in ms. */
  readonly watchTtlMs: number;
  /** Requests per second per client address; undefined: no limit. */
  readonly rateLimit: number | undefined;
  readonly allowAdminWithoutAuth: boolean;
  /** PostgreSQL connection string: cluster mode when given. */
  readonly cluster: string | undefined;
  readonly advertiseUrl: string | undefined;
  readonly serverId: string | undefined;
  readonly leaderLeaseMs: number;
  readonly shards: number | undefined;
  /** Standbys per shard (0 or 1). */
  readonly replicas: 0 | 1;
  /** TEST ONLY: let the cluster's test knobs act (see ClusterOptions.unsafeTestKnobs). */
  readonly unsafeTestKnobs: boolean;
  readonly help: boolean;
  readonly version: boolean;
}

/** A command-line mistake: printed to stderr, exit code 2. */
class UsageError extends Error {
  override name = "UsageError";
}

/** The `--help` text: every option with its default. */
const HELP = `leasehold-server ${VERSION}: the leasehold reference lock server (protocol v1 over HTTP/1.1)

Usage: leasehold-server [options]

Options:
  --host <address>      interface to bind (default: 127.0.0.1, loopback only; use 0.0.0.0 to serve other hosts)
  --port <n>            TCP port, 0 for an ephemeral one (default: ${DEFAULT_CLI_PORT})
  --data-dir <dir>      directory for the durable timestamp bound (default: none: timestamps and
                        fencing tokens then restart at 1 with the process; give one in production)
  --lease-ms <ms>       release a token this long after its last refresh (default: 10000)
  --log-level <level>   ${LOG_LEVELS.join(", ")} (default: info); pino JSON lines on stdout
  --auth-file <path>    JSON table of bearer tokens, { "*": ["token"], "<namespace>": ["token"] };
                        tokens under "@admin" may also revoke locks
                        (default: none: no authentication, unless ${AUTH_TOKENS_ENV} holds such a
                        table); tokens are never accepted as a command-line value
  --max-connections <n> connections open at once; one beyond gets 503 and is closed (default: 10000)
  --max-waiting-per-namespace <n>
                        waiting lock requests per namespace; one more gets 429 (default: 100000)
  --watch-ttl-ms <ms>   how long a lock watch lasts unless re-registered (default: 60000)
  --rate-limit <requests/s>
                        requests per second per client address; over it: 429 with retry-after
                        (default: off)
  --allow-admin-without-auth
                        serve admin routes (revoke) although no authentication is configured
                        (default: off: without an "@admin" token revoke is refused with 403);
                        only on a trusted network
  --cluster <postgres connection string>
                        cluster mode (docs/cluster.md): lead some of the shards, with leadership and
                        timestamp bounds in PostgreSQL; tables are created on first start in schema
                        "leasehold" unless the string's options set a search_path (default: off,
                        a single server that needs no database; --data-dir is then not used);
                        an unreachable database at start is retried while the server listens and
                        answers 503; a refused one (credentials, no such database, --shards) exits 1
  --advertise-url <url> cluster mode: the URL clients and other servers reach this one at
                        (default: http://<host>:<port>)
  --server-id <id>      cluster mode: this server's id (default: <hostname>-<random>, new per start)
  --leader-lease-ms <ms>
                        cluster mode: shard leadership lasts this long without renewal; a crashed
                        leader's shards move after about this long (default: 3000)
  --shards <n>          cluster mode: shard count of a new cluster (default: 64; an existing
                        cluster keeps its count and refuses a different one)
  --replicas <0|1>      cluster mode: 1 streams each led shard to a standby, grants answered once
                        it acknowledged them, so locks survive a SIGTERM or crash of their
                        leader; 0 turns that off (default: 1)
  --unsafe-test-knobs   TEST ONLY, cluster mode: with --log-level debug, let LEASEHOLD_TEST_BREAK
                        and LEASEHOLD_TEST_RESERVE_BLOCK switch safety rules off for the
                        reliability suite's negative controls (default: off; never in production)
  -h, --help            print this help and exit
  -v, --version         print the version (${VERSION}) and exit

Signals: SIGTERM or SIGINT stops gracefully: waiting lock requests are answered 503, the
timestamp bound is persisted, the process exits 0. In cluster mode the server also hands each
shard it leads to its in-sync standby with every lock (getting one first, within 2 leader leases,
where none is in sync), or else releases it, so that other servers take the shards at once.

Subcommand: leasehold-server import-bound --data-dir <dir> --cluster <conn>
  copies a stopped single server's timestamp bounds into a cluster (never lowering one).
`;

function integer(flag: string, value: string, min: number, max: number): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(n) || n < min || n > max) {
    throw new UsageError(`--${flag} must be an integer from ${min} to ${max} (got ${JSON.stringify(value)})`);
  }
  return n;
}

function parseFlags(argv: readonly string[]) {
  try {
    return parseArgs({
      args: [...argv],
      strict: true,
      allowPositionals: false,
      options: {
        host: { type: "string", default: "127.0.0.1" },
        port: { type: "string", default: String(DEFAULT_CLI_PORT) },
        "data-dir": { type: "string" },
        "lease-ms": { type: "string", default: "10000" },
        "log-level": { type: "string", default: "info" },
        "auth-file": { type: "string" },
        "max-connections": { type: "string", default: "10000" },
        "max-waiting-per-namespace": { type: "string", default: "100000" },
        "watch-ttl-ms": { type: "string", default: "60000" },
        "rate-limit": { type: "string" },
        "allow-admin-without-auth": { type: "boolean", default: false },
        cluster: { type: "string" },
        "advertise-url": { type: "string" },
        "server-id": { type: "string" },
        "leader-lease-ms": { type: "string", default: "3000" },
        shards: { type: "string" },
        replicas: { type: "string", default: "1" },
        "unsafe-test-knobs": { type: "boolean", default: false },
        help: { type: "boolean", short: "h", default: false },
        version: { type: "boolean", short: "v", default: false },
      },
    }).values;
  } catch (err) {
    // parseArgs names the offending flag; keep its words.
    throw new UsageError(err instanceof Error ? err.message : String(err));
  }
}

/** Parse `argv` (without the node and script paths). Throws {@link UsageError} on any mistake. */
function parseCliOptions(argv: readonly string[]): CliOptions {
  const values = parseFlags(argv);
  const logLevel = LOG_LEVELS.find((level) => level === values["log-level"]);
  if (logLevel === undefined) {
    throw new UsageError(`--log-level must be one of ${LOG_LEVELS.join(", ")} (got ${JSON.stringify(values["log-level"])})`);
  }
  if (values.host === "") throw new UsageError("--host must not be empty");
  if (values["data-dir"] === "") throw new UsageError("--data-dir must not be empty");
  if (values["auth-file"] === "") throw new UsageError("--auth-file must not be empty");
  if (values.cluster === "") throw new UsageError("--cluster must not be empty: give a PostgreSQL connection string");
  if (values["server-id"] === "") throw new UsageError("--server-id must not be empty");
  const advertiseUrl = values["advertise-url"];
  if (advertiseUrl !== undefined && !/^https?:\/\/[^/\s]+$/.test(advertiseUrl)) {
    throw new UsageError(`--advertise-url must be an http(s) URL without a path, like http://10.0.0.5:7878 (got ${JSON.stringify(advertiseUrl)})`);
  }
  return {
    host: values.host,
    port: integer("port", values.port, 0, 65_535),
    dataDir: values["data-dir"],
    leaseMs: integer("lease-ms", values["lease-ms"], 1, 24 * 60 * 60 * 1000),
    logLevel,
    authFile: values["auth-file"],
    maxConnections: integer("max-connections", values["max-connections"], 1, 1_000_000),
    maxWaitingPerNamespace: integer("max-waiting-per-namespace", values["max-waiting-per-namespace"], 1, 100_000_000),
    watchTtlMs: integer("watch-ttl-ms", values["watch-ttl-ms"], 1, 24 * 60 * 60 * 1000),
    rateLimit: values["rate-limit"] === undefined ? undefined : integer("rate-limit", values["rate-limit"], 1, 100_000_000),
    allowAdminWithoutAuth: values["allow-admin-without-auth"],
    cluster: values.cluster,
    advertiseUrl,
    serverId: values["server-id"],
    leaderLeaseMs: integer("leader-lease-ms", values["leader-lease-ms"], 50, 10 * 60 * 1000),
    shards: values.shards === undefined ? undefined : integer("shards", values.shards, 1, LIMITS.maxShards),
    replicas: integer("replicas", values.replicas, 0, 1) as 0 | 1,
    unsafeTestKnobs: values["unsafe-test-knobs"],
    help: values.help,
    version: values.version,
  };
}

/** `leasehold-server import-bound --data-dir <dir> --cluster <conn>`: see docs/cluster.md. */
async function importBoundCommand(argv: readonly string[]): Promise<number> {
  let values: { "data-dir"?: string | undefined; cluster?: string | undefined };
  try {
    values = parseArgs({ args: [...argv], strict: true, allowPositionals: false, options: { "data-dir": { type: "string" }, cluster: { type: "string" } } }).values;
  } catch (err) {
    process.stderr.write(`leasehold-server import-bound: ${err instanceof Error ? err.message : String(err)}\n`);
    return 2;
  }
  const dataDir = values["data-dir"];
  const cluster = values.cluster;
  if (dataDir === undefined || dataDir === "" || cluster === undefined || cluster === "") {
    process.stderr.write("leasehold-server import-bound: give both --data-dir <dir> (of the stopped single server) and --cluster <postgres connection string>\n");
    return 2;
  }
  const [{ importBound }, { createPostgresCoordinator }] = await Promise.all([import("./cluster/import-bound.js"), import("./cluster/postgres/postgres-coordinator.js")]);
  const coordinator = createPostgresCoordinator({ connectionString: cluster, statementTimeoutMs: 10_000 });
  try {
    const { namespaces, file } = await importBound(coordinator, dataDir);
    process.stdout.write(`${JSON.stringify({ msg: "imported", namespaces, file })}\n`);
    return 0;
  } catch (err) {
    process.stderr.write(`leasehold-server import-bound: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  } finally {
    await coordinator.close();
  }
}

async function main(argv: readonly string[]): Promise<number> {
  if (argv[0] === "import-bound") return importBoundCommand(argv.slice(1));
  let options: CliOptions;
  try {
    options = parseCliOptions(argv);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`leasehold-server: ${err.message}\nRun leasehold-server --help for every option.\n`);
    return 2;
  }
  if (options.help) {
    process.stdout.write(HELP);
    return 0;
  }
  if (options.version) {
    process.stdout.write(`${VERSION}\n`);
    return 0;
  }
  // Synchronous stdout writes: the last lines before exit are never lost.
  const logger = pino({ level: options.logLevel, base: { pid: process.pid } }, pino.destination({ dest: 1, sync: true }));
  if (options.cluster !== undefined && options.dataDir !== undefined) {
    logger.warn("--data-dir is not used in cluster mode: timestamp bounds live in PostgreSQL (see import-bound)");
  } else if (options.dataDir === undefined && options.cluster === undefined) {
    logger.warn("no --data-dir: timestamps and fencing tokens restart at 1 with the process");
  }
  let auth: AuthTable | undefined;
  try {
    auth = loadAuthTable({ file: options.authFile });
  } catch (err) {
    // The message names the file or variable and never quotes a token.
    process.stderr.write(`leasehold-server: ${err instanceof Error ? err.message : String(err)}\n`);
    return 2;
  }
  logger.info({ authentication: auth === undefined ? "off" : "bearer", namespaces: auth === undefined ? 0 : Object.keys(auth).length }, "authentication");
  if (options.allowAdminWithoutAuth && auth === undefined) {
    logger.warn("--allow-admin-without-auth: anyone who reaches this server may revoke any lock");
  }
  // An error that waiting cannot fix, met while joining after listening (PostgreSQL was
  // unreachable at start): the server has logged it and stopped; exit 1.
  let fatal = (): void => undefined;
  // The signal handlers are in before the server starts: a SIGTERM that arrives while it starts (or
  // right after its listening line) stops it gracefully once started, instead of killing it.
  const early: NodeJS.Signals[] = [];
  let onSignal = (signal: NodeJS.Signals): void => void early.push(signal);
  process.on("SIGTERM", (signal) => onSignal(signal));
  process.on("SIGINT", (signal) => onSignal(signal));
  const failed = new Promise<number>((resolve) => (fatal = () => resolve(1)));
  let server: Awaited<ReturnType<typeof startServer>>;
  try {
    server = await startServer({
      host: options.host,
      port: options.port,
      dataDir: options.dataDir,
      leaseMs: options.leaseMs,
      logger,
      auth,
      maxConnections: options.maxConnections,
      maxWaitingPerNamespace: options.maxWaitingPerNamespace,
      watchTtlMs: options.watchTtlMs,
      rateLimit: options.rateLimit,
      allowAdminWithoutAuth: options.allowAdminWithoutAuth,
      cluster:
        options.cluster === undefined
          ? undefined
          : {
              connectionString: options.cluster,
              advertiseUrl: options.advertiseUrl,
              serverId: options.serverId,
              leaderLeaseMs: options.leaderLeaseMs,
              shards: options.shards,
              replicas: options.replicas,
              unsafeTestKnobs: options.unsafeTestKnobs,
              onFatal: () => fatal(),
            },
    });
  } catch (err) {
    // Port in use, unreadable data directory, corrupt bound file, a cluster that refuses this
    // server for good (shard count, credentials, database): say so in the log stream, exit 1. An
    // unreachable PostgreSQL is not among them: the server listens and retries.
    logger.fatal({ err }, "could not start");
    return 1;
  }
  const stopped = new Promise<number>((resolve) => {
    let stopping = false;
    const stop = (signal: NodeJS.Signals): void => {
      if (stopping) {
        logger.warn({ signal }, "second signal: exiting without waiting for the graceful stop");
        resolve(1);
        return;
      }
      stopping = true;
      logger.info({ signal }, "stopping");
      server.close().then(
        () => resolve(0),
        (err: unknown) => {
          logger.error({ err }, "graceful stop failed");
          resolve(1);
        },
      );
    };
    onSignal = stop;
    for (const signal of early) stop(signal);
  });
  return Promise.race([stopped, failed]);
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`leasehold-server: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
