import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { isLeaseholdError, LeaseholdError, type AnyOperation, type ClusterMembersResponse, type ClusterResponse } from "@leasehold/protocol";
import type { Logger } from "pino";
import type { RouteLabel, ServerMetrics } from "../metrics/server-metrics.js";
import { PROMETHEUS_CONTENT_TYPE } from "../metrics/metric-registry.js";
import type { EmbeddedLockService } from "../service/embedded-lock-service.js";
import { ClientGoneError, readBody } from "../support/read-body.js";
import { canAnswer, sendError, sendJson, type ExtraHeaders } from "../support/send-json.js";
import { logAccess } from "./access-log.js";
import type { Admission } from "./admit-request.js";
import type { BearerAuth } from "./bearer-auth.js";
import { callOperation } from "./call-operation.js";
import { checkContentType } from "./check-content-type.js";
import { decodeNamespace } from "./decode-namespace.js";
import { ALLOWED_METHODS, matchRoute, type Route } from "./match-route.js";
import { parseJsonBody } from "./parse-json-body.js";
import { queryOf } from "./query-of.js";
import { serveHealth } from "./serve-health.js";
import { serveClusterMembers, singleServerMembers } from "./serve-cluster-members.js";
import { serveEvents } from "./serve-events.js";
import { serveInspection } from "./serve-inspection.js";
import { serveStatusPage } from "./serve-status-page.js";
import { serveLockBatch } from "./serve-lock-batch.js";
import { serveLockEvents } from "./serve-lock-events.js";
import { traceDetail } from "./trace-detail.js";
import { undeliveredTokens } from "./undelivered-tokens.js";

/** What the request handler needs from its host. */
export interface RequestHandlerOptions {
  /** The lock service every operation is sent to. */
  readonly service: EmbeddedLockService;
  /** Where request counts and latencies go and what `GET /metrics` renders. */
  readonly metrics: ServerMetrics;
  /**
   * Errors (5xx) and undelivered grants are logged here; nothing is logged per request at info.
   * At `debug`, one access-log line per request (operation, namespace, status, duration); at
   * `trace`, plus what it carried, tokens only as fingerprints.
   */
  readonly logger: Logger;
  /** True once the host is stopping: answers then carry `connection: close` so sockets drain. */
  readonly isClosing: () => boolean;
  /**
   * Connection limit, rate limit and authentication, checked before anything else about a request
   * (see `createAdmission`). Default: none, every request is admitted.
   */
  readonly admit?: Admission | undefined;
  /**
   * The bearer-token checker, for the routes whose answer depends on the credential
   * (`GET /v1/namespaces` lists what it may see; revoke needs an admin). Default: none,
   * authentication off.
   */
  readonly auth?: BearerAuth | undefined;
  /**
   * Serve revoke when authentication is off. Default false: revoke takes locks from clients, so
   * without credentials it is refused (403) unless the operator opted in.
   */
  readonly allowAdminWithoutAuth?: boolean | undefined;
  /**
   * The answer of `GET /v1/cluster`: who leads each shard. A single server answers one shard led
   * by itself; a cluster member what it knows of the lease table. `lag` (the `?lag` query, what
   * other members' status views ask) adds the standby lag of the shards this server leads.
   */
  readonly cluster?: ((options: { readonly lag: boolean }) => ClusterResponse) | undefined;
  /**
   * The answer of `GET /v1/cluster/members`: every shard's leader and every member with whether it
   * answers (a cluster member's `ClusterMembersView`). Default: this server alone, the only member,
   * built from the `cluster` answer.
   */
  readonly members?: (() => Promise<ClusterMembersResponse>) | undefined;
}

/** A `node:http` request listener serving protocol v1, health and metrics. */
export type RequestHandler = (req: IncomingMessage, res: ServerResponse) => void;

const CLOSE: ExtraHeaders = Object.freeze({ connection: "close" });

function routeLabel(route: Route): RouteLabel {
  return route.kind === "operation" ? route.operation : route.kind;
}

/**
 * What the handler knows of one request's connection. A plain object rather than an
 * AbortController: creating an AbortSignal per request cost more than the whole lock grant
 * (profiled), and only a lock that has to wait ever needs to hear of a disconnect.
 */
interface Exchange {
  /** The client left before the answer was finished. */
  gone: boolean;
  /** Called once if the client leaves while a lock waits. */
  onGone: (() => void) | null;
  /** Tokens the answer being written grants; released if the client leaves before it is finished. */
  granted: { readonly namespace: string; readonly tokens: string[] } | null;
  /** Set when the access log is at trace: what the request carried, for its log line. */
  trace: boolean;
  detail: object | null;
}

/** `GET /v1/cluster` of a host that gave no answer of its own: one shard, led by this server (epoch 1: its only term). */
function singleServerCluster(leaderId: string, host: string | undefined): ClusterResponse {
  return { serverId: leaderId, shards: 1, leaders: [{ shard: 0, leaderUrl: host === undefined ? null : `http://${host}`, leaderId, epoch: 1, standby: null }] };
}

/** Headers an error answer needs besides its body. */
function errorHeaders(err: LeaseholdError): ExtraHeaders {
  const allow = err.details.allow;
  if (err.code === "METHOD_NOT_ALLOWED" && Array.isArray(allow)) return { allow: allow.join(", ") };
  // The unread rest of an oversized body is still on the socket: this connection cannot be reused.
  if (err.code === "PAYLOAD_TOO_LARGE") return { connection: "close" };
  // A shard without a usable leader says when to come back (PROTOCOL.md "Cluster mode").
  const retryAfterMs = err.details.retryAfterMs;
  if (err.code === "UNAVAILABLE" && typeof retryAfterMs === "number") return { "retry-after": String(Math.max(1, Math.ceil(retryAfterMs / 1000))) };
  return {};
}

/**
 * Build the request listener. Admission comes first (connection limit 503, rate 429, authentication
 * 401), then checks run in the protocol's order of precedence: route (404),
 * method (405), namespace (400), content type (415), size (413), JSON syntax (400), then the
 * service's own validation (400/409). Only a bug in the server answers 500.
 */
export function createRequestHandler(options: RequestHandlerOptions): RequestHandler {
  const { service, metrics, logger, isClosing, admit, cluster } = options;
  const inspection = { service, auth: options.auth, allowAdminWithoutAuth: options.allowAdminWithoutAuth === true };

  const clusterAnswer = (req: IncomingMessage): ClusterResponse => cluster?.({ lag: queryOf(req.url).has("lag") }) ?? singleServerCluster(service.leaderId, req.headers.host);

  async function serveOperation(
    req: IncomingMessage,
    res: ServerResponse,
    operation: AnyOperation,
    rawNamespace: string,
    exchange: Exchange,
  ): Promise<void> {
    const namespace = decodeNamespace(rawNamespace);
    const emptyAllowed = operation === "immutable-timestamp";
    const declaredEmpty = req.headers["content-length"] === "0" || (req.headers["content-length"] === undefined && req.headers["transfer-encoding"] === undefined);
    checkContentType(req.headers["content-type"], emptyAllowed && declaredEmpty);
    const raw = await readBody(req);
    let body: unknown;
    if (raw.length === 0) {
      // Lenient on one point only: `immutable-timestamp` takes no fields, so an empty body means `{}`.
      if (!emptyAllowed) {
        throw new LeaseholdError("INVALID_ARGUMENT", `${operation} request: the body is empty; send a JSON object`, { path: "(body)" });
      }
      body = {};
    } else body = parseJsonBody(raw);
    if (exchange.gone) return;

    if (operation === "lock-batch") {
      await serveLockBatch({ service, res, namespace, body, exchange, headers: isClosing() ? CLOSE : {}, release: releaseUndelivered });
      return;
    }
    let answer: unknown;
    if (operation === "lock-cancel") answer = await service.cancelLock(namespace, body);
    else if (operation === "lock-watches") answer = await service.lockWatches(namespace, body);
    else if (operation === "lock-events") answer = await serveLockEvents(service, namespace, body, exchange);
    else if (operation === "timestamp-leases") answer = await service.acquireTimestampLease(namespace, body);
    else if (operation === "timestamp-leases/min") answer = await service.minLeasedTimestamp(namespace, body);
    else if (operation === "lock" || operation === "wait-for-locks") {
      const begun = operation === "lock" ? service.beginLock(namespace, body) : service.beginWaitForLocks(namespace, body);
      if ("abandon" in begun) {
        // Only a waiting lock listens for the client leaving: it then leaves every queue.
        exchange.onGone = begun.abandon;
        answer = await begun.answer;
        exchange.onGone = null;
      } else answer = begun;
    } else answer = await callOperation(service, operation, namespace, body, {});
    if (exchange.trace) exchange.detail = traceDetail(operation, body, answer);
    const tokens = undeliveredTokens(operation, body, answer);
    if (tokens.length > 0) {
      // The client may have left while the service worked: then 'close' has already been seen.
      if (exchange.gone) return releaseUndelivered({ namespace, tokens });
      exchange.granted = { namespace, tokens };
    }
    sendJson(res, 200, answer, isClosing() ? CLOSE : undefined);
  }

  /** The client left before its answer was finished: nobody else could ever release these. */
  function releaseUndelivered(granted: { readonly namespace: string; readonly tokens: string[] }): void {
    logger.warn({ namespace: granted.namespace, tokens: granted.tokens.length }, "answer undelivered: releasing what it granted");
    service.unlock(granted.namespace, { tokens: granted.tokens }).catch((err: unknown) => {
      logger.error({ err }, "could not release the tokens of an undelivered answer; they will lapse with their lease");
    });
  }

  async function serve(req: IncomingMessage, res: ServerResponse, route: Route, exchange: Exchange): Promise<void> {
    const refusal = admit?.(req, route);
    if (refusal != null) {
      // The body is never read: a refused client must not make the server parse or validate it.
      // Unless it was empty, the connection cannot be reused, so it closes.
      const unread = req.headers["content-length"] !== undefined && req.headers["content-length"] !== "0";
      const chunked = req.headers["transfer-encoding"] !== undefined;
      const close = isClosing() || unread || chunked ? CLOSE : {};
      sendError(res, refusal.error, { ...close, ...refusal.headers });
      return;
    }
    if (route.kind === "unmatched") {
      const path = (req.url ?? "").split("?", 1)[0] ?? "";
      throw new LeaseholdError("NOT_FOUND", `no route ${req.method ?? "?"} ${JSON.stringify(path.slice(0, 200))}; operations are POST /v1/namespaces/{namespace}/{operation}`, {});
    }
    const allowed: readonly string[] = ALLOWED_METHODS[route.kind];
    if (!allowed.includes(req.method ?? "")) {
      throw new LeaseholdError("METHOD_NOT_ALLOWED", `method ${req.method ?? "?"} is not allowed on this route; use ${allowed.join(" or ")}`, {
        method: req.method ?? null,
        allow: allowed,
      });
    }
    const closeHeader: ExtraHeaders = isClosing() ? CLOSE : {};
    switch (route.kind) {
      case "health":
        await serveHealth(req, res, () => service.health(), closeHeader);
        return;
      case "namespaces":
      case "locks":
      case "revoke":
        await serveInspection(req, res, route, inspection, closeHeader);
        return;
      case "events":
        serveEvents(req, res, inspection, closeHeader);
        return;
      case "ui":
        serveStatusPage(req, res, route.file, closeHeader);
        return;
      case "cluster":
        sendJson(res, 200, clusterAnswer(req), closeHeader);
        return;
      case "cluster-members": {
        const single = async (): Promise<ClusterMembersResponse> => {
          const answer = clusterAnswer(req);
          return singleServerMembers(answer, answer.leaders[0]?.leaderUrl ?? `http://${req.headers.host ?? "?"}`);
        };
        await serveClusterMembers(req, res, options.members ?? single, closeHeader);
        return;
      }
      case "metrics": {
        const text = Buffer.from(await metrics.renderAll(), "utf8");
        res.writeHead(200, { ...closeHeader, "content-type": PROMETHEUS_CONTENT_TYPE, "content-length": String(text.length), "cache-control": "no-store" });
        res.end(text);
        return;
      }
      case "operation":
        await serveOperation(req, res, route.operation, route.rawNamespace, exchange);
        return;
    }
  }

  function answerError(res: ServerResponse, err: unknown, clientGone: boolean): void {
    // Whatever the service threw after an abort is the echo of that abort: nobody is left to tell.
    if (clientGone || err instanceof ClientGoneError) return;
    if (!canAnswer(res)) {
      if (!isLeaseholdError(err)) logger.error({ err }, "request failed after its answer had started");
      return;
    }
    const closeHeader: ExtraHeaders = isClosing() ? CLOSE : {};
    if (isLeaseholdError(err) && err.code !== "INTERNAL") {
      sendError(res, err, { ...closeHeader, ...errorHeaders(err) });
      return;
    }
    const incident = randomUUID();
    logger.error({ err, incident }, "internal error while serving a request");
    sendError(
      res,
      new LeaseholdError("INTERNAL", "internal server error; the server logged the details under this incident id", { incident }),
      closeHeader,
    );
  }

  return (req, res) => {
    const started = performance.now();
    const route = matchRoute(req.url);
    // The level is read once per request: at info the access log costs this one comparison.
    const debug = logger.isLevelEnabled("debug");
    const exchange: Exchange = { gone: false, onGone: null, granted: null, trace: debug && logger.isLevelEnabled("trace"), detail: null };
    res.on("close", () => {
      // 'close' also follows a finished answer; only an unfinished one means the client left.
      const finished = res.writableFinished;
      if (!finished) {
        exchange.gone = true;
        exchange.onGone?.();
        // A batch's list of unflushed grants may be empty by now: nothing to release then.
        if (exchange.granted !== null && exchange.granted.tokens.length > 0) releaseUndelivered(exchange.granted);
      }
      const label = routeLabel(route);
      const status = finished ? res.statusCode : 499;
      const seconds = (performance.now() - started) / 1000;
      metrics.observeRequest(label, status, seconds);
      if (debug) logAccess(logger, label, route, status, seconds, exchange.trace ? (exchange.detail ?? {}) : null);
    });
    serve(req, res, route, exchange)
      .catch((err: unknown) => answerError(res, err, exchange.gone))
      .catch((err: unknown) => {
        logger.error({ err }, "could not answer a request");
        res.destroy();
      });
  };
}
