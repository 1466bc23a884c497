import { createServer, type Server } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { pino, type Logger } from "pino";
import { createAdmission } from "./http/admit-request.js";
import type { AuthTable } from "./http/auth-table.js";
import { createBearerAuth } from "./http/bearer-auth.js";
import { handleClientError } from "./http/handle-client-error.js";
import { createRateLimiter } from "./http/rate-limiter.js";
import { createRequestHandler } from "./http/create-request-handler.js";
import { createServerMetrics } from "./metrics/server-metrics.js";
import { createLockService } from "./service/create-lock-service.js";
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
}

/** A running server. */
export interface RunningServer {
  /** Base URL of the server, for example `http://127.0.0.1:7878` (no trailing slash). */
  readonly url: string;
  /** The lock service the server serves; call it directly to skip HTTP in the same process. */
  readonly service: EmbeddedLockService;
  /**
   * Stop: refuse new connections, answer every waiting lock request 503 `UNAVAILABLE`, persist the
   * timestamp bound, close idle keep-alive connections, then resolve. Idempotent.
   */
  close(): Promise<void>;
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
  const admit = createAdmission({
    auth: options.auth !== undefined && Object.keys(options.auth).length > 0 ? createBearerAuth(options.auth) : undefined,
    rateLimiter: options.rateLimit === undefined ? undefined : createRateLimiter({ requestsPerSecond: options.rateLimit }),
    overConnectionLimit: (req) => overLimit.has(req.socket),
    maxConnections,
  });

  const logger = options.logger ?? pino({ level: "silent" });
  const service = createLockService({ ...options, logger });
  const { version } = await service.health();
  const metrics = createServerMetrics(() => service.metrics(), { version, leaderId: service.leaderId });
  let closing: Promise<void> | undefined;

  const server = createServer(createRequestHandler({ service, metrics, logger, admit, isClosing: () => closing !== undefined }));
  server.on("connection", trackConnection);
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
  const url = formatUrl(address);
  logger.info({ url, leaderId: service.leaderId, version }, "listening");

  async function stop(): Promise<void> {
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    // Answers every waiting lock request 503 and persists the bound; handlers then write the 503s.
    await service.close();
    server.closeIdleConnections();
    const timer = setTimeout(() => server.closeAllConnections(), closeTimeoutMs);
    timer.unref();
    await closed;
    clearTimeout(timer);
    logger.info({ url }, "stopped");
  }

  return {
    url,
    service,
    close: () => (closing ??= stop()),
  };
}
