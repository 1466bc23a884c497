import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import type { Duplex } from "node:stream";
import { pino, type Logger } from "pino";
import { createAdmission } from "./http/admit-request.js";
import type { AuthTable } from "./http/auth-table.js";
import { createBearerAuth } from "./http/bearer-auth.js";
import { handleClientError } from "./http/handle-client-error.js";
import { createRateLimiter } from "./http/rate-limiter.js";
import { createRequestHandler } from "./http/create-request-handler.js";
import { createServerMetrics } from "./metrics/server-metrics.js";
import type { ClusterMember, ClusterOptions } from "./cluster/create-cluster-service.js";
import { createLockService } from "./service/create-lock-service.js";
import { VERSION } from "./version.js";
import type { EmbeddedLockService, LockServiceOptions } from "./service/embedded-lock-service.js";

/** Options of {@link startServer}: where to listen, plus every option of the lock service. */
export interface StartServerOptions extends LockServiceOptions {
  /**
   * Interface to bind. Default `127.0.0.1`: a lock server trusts every client that reaches it, so
   * it is reachable from other hosts only when you say so (`0.0.0.0` or a specific address).
   */
  readonly host?: string | undefined;
  /**
   * TCP port. Default `0`: an ephemeral port chosen by the OS, read it back from `url`. Embedded
   * servers and tests then never collide; the CLI defaults to 7878 instead.
   */
  readonly port?: number | undefined;
  /**
   * Where the server logs: one `listening` line at start, one `stopped` line at stop, warnings and
   * errors; never a line per request at info. Default: a silent logger, because a library should
   * not write to the host's stdout unasked. The lock service logs to the same logger.
   */
  readonly logger?: Logger | undefined;
  /**
   * How long `close()` waits for answers in flight (a 503 to every waiting lock request, answers
   * being written) before it cuts the remaining connections. Default 5,000 ms.
   */
  readonly closeTimeoutMs?: number | undefined;
  /**
   * Bearer tokens allowed per namespace, `"*"` for every namespace (see {@link AuthTable}). Default:
   * none, authentication off, because the default bind is loopback. When set, every operation needs
   * `authorization: Bearer <token>` with a token valid for its namespace or for `"*"`, `GET /metrics`
   * needs one valid for `"*"`, and `GET /v1/health` stays open for load balancers. A refused request
   * gets 401 `UNAUTHENTICATED` with `www-authenticate: Bearer`, the same answer for every namespace.
   * The CLI reads the table from `--auth-file` or `LEASEHOLD_AUTH_TOKENS` (`loadAuthTable`).
   */
  readonly auth?: AuthTable | undefined;
  /**
   * Most client connections open at once. Default 10,000: far above any client pool, well below
   * the file-descriptor limits of a typical host. A connection accepted beyond it has its first
   * request answered 503 `UNAVAILABLE` (a JSON body, `retry-after: 1`, `connection: close`) and is
   * then closed; one that sends nothing is closed after 10 s. Connections within the limit are
   * never affected.
   */
  readonly maxConnections?: number | undefined;
  /**
   * Requests per second each client address may send, as a token bucket holding one second's
   * worth (so bursts up to the rate pass). Default: none, no rate limit, because a lock service's
   * clients are usually a handful of trusted application servers behind one address each. Over the
   * rate: 429 `TOO_MANY_REQUESTS` with a `retry-after` header in whole seconds.
   */
  readonly rateLimit?: number | undefined;
  /**
   * Serve the admin routes (revoke) when no authentication is configured. Default false: revoke
   * takes locks away from clients, so without an auth table (whose `"@admin"` tokens are the admin
   * credentials) it is refused with 403 `PERMISSION_DENIED` unless this is set. The CLI flag is
   * `--allow-admin-without-auth`. It has no effect when `auth` is set.
   */
  readonly allowAdminWithoutAuth?: boolean | undefined;
  /**
   * How many of the busiest namespaces get their own `leasehold_namespace_*` series at
   * `GET /metrics`. Default 10: bounded label cardinality (see docs/operations.md "Metrics").
   */
  readonly metricsTopNamespaces?: number | undefined;
  /**
   * Cluster mode (docs/cluster.md): several servers over one PostgreSQL database, each leading some
   * of the shards. Default: none, a single server that leads everything and needs no database.
   * `dataDir` is not used in cluster mode (bounds live in PostgreSQL).
   */
  readonly cluster?: ClusterOptions | undefined;
}

/** A running server; `await using server = await startServer()` closes it at the end of the scope. */
export interface RunningServer extends AsyncDisposable {
  /** Base URL of the server, for example `http://127.0.0.1:7878` (no trailing slash). */
  readonly url: string;
  /** The lock service the server serves; call it directly to skip HTTP in the same process. */
  readonly service: EmbeddedLockService;
  /**
   * Stop: refuse new connections, answer every waiting lock request 503 `UNAVAILABLE`, persist the
   * timestamp bound, close idle keep-alive connections, then resolve. Idempotent.
   */
  close(): Promise<void>;
  /** `close()`, for `await using`. */
  [Symbol.asyncDispose](): Promise<void>;
}

function formatUrl(address: AddressInfo): string {
  const host = address.family === "IPv6" || address.address.includes(":") ? `[${address.address}]` : address.address;
  return `http://${host}:${address.port}`;
}

function listen(server: Server, host: string, port: number): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen({ host, port }, () => {
      server.off("error", reject);
      resolve(server.address() as AddressInfo);
    });
  });
}

/**
 * Start the leasehold HTTP server: protocol v1 under `/v1/namespaces/{namespace}/{operation}`,
 * `GET /v1/health` and `GET /metrics`. Resolves once it listens.
 */
export async function startServer(options: StartServerOptions = {}): Promise<RunningServer> {
  const { host = "127.0.0.1", port = 0, closeTimeoutMs = 5_000 } = options;
  // Options are checked before the service exists, so a bad one leaves nothing running.
  const maxConnections = options.maxConnections ?? 10_000;
  if (!Number.isSafeInteger(maxConnections) || maxConnections < 1) {
    throw new RangeError(`maxConnections must be a positive integer (got ${maxConnections})`);
  }
  // Own accounting rather than server.maxConnections: node drops sockets over that limit without a
  // word, while the protocol promises a JSON answer to every refused request.
  const accepted = new Set<Socket>();
  const overLimit = new WeakSet<Socket>();
  const trackConnection = (socket: Socket): void => {
    if (accepted.size >= maxConnections) {
      overLimit.add(socket);
      // A refused connection that never sends a request must not hold a descriptor for long.
      socket.setTimeout(10_000, () => socket.destroy());
      return;
    }
    accepted.add(socket);
    socket.once("close", () => accepted.delete(socket));
  };
  const auth = options.auth !== undefined && Object.keys(options.auth).length > 0 ? createBearerAuth(options.auth) : undefined;
  const topNamespaces = options.metricsTopNamespaces ?? 10;
  if (!Number.isSafeInteger(topNamespaces) || topNamespaces < 0) {
    throw new RangeError(`metricsTopNamespaces must be a non-negative integer (got ${topNamespaces})`);
  }
  const admit = createAdmission({
    auth,
    rateLimiter: options.rateLimit === undefined ? undefined : createRateLimiter({ requestsPerSecond: options.rateLimit }),
    overConnectionLimit: (req) => overLimit.has(req.socket),
    maxConnections,
  });

  const logger = options.logger ?? pino({ level: "silent" });
  let member: ClusterMember | null = null;
  let service: EmbeddedLockService;
  if (options.cluster === undefined) service = createLockService({ ...options, logger });
  else {
    const version = options.version ?? VERSION;
    // Loaded only in cluster mode: a single server never loads node-postgres (start-up time).
    const { createClusterMember } = await import("./cluster/create-cluster-service.js");
    member = await createClusterMember(options.cluster, { ...options, logger, version, url: "" });
    service = member.service;
  }
  const health = await service.health();
  const { version } = health;
  const metrics = createServerMetrics(() => service.metrics(), { version, leaderId: service.leaderId }, {
    namespaces: () => service.namespaceSummaries(),
    topNamespaces,
    extra: member === null ? undefined : [...member.metrics.all(), ...member.replicationMetrics.all()],
  });
  let closing: Promise<void> | undefined;
  let url = "";
  const serverId = health.serverId ?? service.leaderId;
  const cluster =
    member === null
      ? () => ({ serverId, shards: 1, leaders: [{ shard: 0, leaderUrl: url, leaderId: service.leaderId, epoch: 1, standby: null }] })
      : (options: { readonly lag: boolean }) => (member as ClusterMember).service.cluster(options);

  const handler = createRequestHandler({
      service,
      metrics,
      logger,
      admit,
      auth,
      allowAdminWithoutAuth: options.allowAdminWithoutAuth,
      cluster,
      members: member === null ? undefined : () => (member as ClusterMember).members.answer(),
      isClosing: () => closing !== undefined,
    });
  // Server-to-server replication is authenticated by the cluster key alone: client admission
  // (bearer tokens, rate limits) never applies to it, and a client credential never opens it.
  const replicationRoute = member?.standby.route;
  const server = createServer(replicationRoute === undefined ? handler : (req, res) => void (replicationRoute(req, res) || handler(req, res)));
  server.on("connection", trackConnection);
  // The one upgrade served: a leader's replication stream to a cluster member. (With no listener,
  // node serves an upgrade request as a plain request, as a single server does.)
  const stream = member?.standby.stream;
  if (stream !== undefined) server.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => stream.upgrade(req, socket, head));
  server.on("clientError", handleClientError);
  // lock long-polls wait up to 60 s; leave headroom over that before node gives up on a request.
  server.requestTimeout = 120_000;

  let address: AddressInfo;
  try {
    address = await listen(server, host, port);
  } catch (err) {
    await service.close();
    throw err;
  }
  url = formatUrl(address);
  if (member !== null) member.runtime.url = options.cluster?.advertiseUrl ?? url;
  logger.info(
    { url, leaderId: service.leaderId, serverId, version, ...(member === null ? {} : { cluster: { shards: member.runtime.shards, advertiseUrl: member.runtime.url } }) },
    "listening",
  );
  // Leadership starts after the server accepts connections: until it leads a shard it answers
  // 421/503, which clients follow, so a slow first pass never delays "listening".
  member?.runtime.start().catch((err: unknown) => logger.warn({ err }, "the first cluster pass failed; retrying on the regular cadence"));

  async function stop(): Promise<void> {
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    // Answers every waiting lock request 503 and persists the bound; handlers then write the 503s.
    // A cluster member hands shards with an in-sync standby over first: their streams stay open
    // until then, so the leader side stops after.
    await service.close();
    member?.leader?.stop();
    member?.standby.stream.closeAll();
    await member?.members.close();
    server.closeIdleConnections();
    const timer = setTimeout(() => server.closeAllConnections(), closeTimeoutMs);
    timer.unref();
    await closed;
    clearTimeout(timer);
    logger.info({ url }, "stopped");
  }

  const close = (): Promise<void> => (closing ??= stop());
  // After `close` exists: the handler runs at once if joining already failed for good.
  if (member !== null) {
    const onFatal = options.cluster?.onFatal;
    member.runtime.onFatal((err) => {
      logger.fatal({ err }, "cannot join the cluster, and waiting will not fix it; stopping");
      void close()
        .catch((closeErr: unknown) => logger.error({ err: closeErr }, "closing after a fatal cluster error failed"))
        .finally(() => onFatal?.(err));
    });
  }
  return { url, service, close, [Symbol.asyncDispose]: close };
}
