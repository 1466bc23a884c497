import type { IncomingMessage, ServerResponse } from "node:http";
import type { Logger } from "pino";
import { ClientGoneError, readBody } from "../../support/read-body.js";
import { sendJson } from "../../support/send-json.js";
import { CLUSTER_AUTH_HEADER, DEFAULT_MAX_SKEW_MS, verifyBody, verifyHeader, type ClusterAuthRefusal } from "./cluster-key.js";
import { createRefusalLog } from "./refusal-log.js";
import type { ReplicaStore } from "./replica-store.js";
import { parseReplicationMessage, REPLICATION_PATH_PREFIX, ReplicationRefusal, shardOfPath } from "./replication-wire.js";

/** What both of a standby's replication routes (the POST route and the stream) are made with. */
export interface ReplicationAuthOptions {
  /** The cluster key, `null` until this server loaded it at join (every request is refused until then). */
  readonly key: () => Buffer | null;
  readonly store: ReplicaStore;
  readonly logger: Logger;
  /** How far a signature's timestamp may be from this server's wall clock. Default {@link DEFAULT_MAX_SKEW_MS}. */
  readonly maxSkewMs?: number | undefined;
  /** Wall clock (ms since the epoch). Default `Date.now`. */
  readonly wallClock?: (() => number) | undefined;
  /** Hears each refused authentication (for a metric). Default: nothing. */
  readonly onUnauthenticated?: ((reason: ClusterAuthRefusal) => void) | undefined;
}

/** What the replication route is made with. */
export interface ReplicationRouteOptions extends ReplicationAuthOptions {
  /**
   * Largest body accepted. Default 64 MiB: a snapshot carries a whole shard's table, far above the
   * client limit; the signature is checked before a byte of the body is read, so only a member can
   * make this server read that much.
   */
  readonly maxBodyBytes?: number | undefined;
}

/**
 * The standby's side of `POST /v1/internal/replication/{shard}`. Answers a request whose path is
 * under the replication prefix and answers true; false for any other path (the client routes go on).
 * Only a request signed with the cluster key (cluster-key.ts) reaches the replica store: one without
 * it, with a wrong or stale signature, or with a client bearer token (which never counts here) is
 * answered 401 with a log line, before its body is read, and changes nothing.
 */
export function createReplicationRoute(options: ReplicationRouteOptions): (req: IncomingMessage, res: ServerResponse) => boolean {
  const { logger, store } = options;
  const wallClock = options.wallClock ?? Date.now;
  const logRefusal = createRefusalLog(logger, wallClock, options.onUnauthenticated);

  async function serve(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
    const shard = shardOfPath(path);
    if (shard === null) {
      sendJson(res, 404, { error: { code: "NOT_FOUND", message: `no replication route ${JSON.stringify(path.slice(0, 200))}; use POST ${REPLICATION_PATH_PREFIX}{shard}`, details: {} } });
      return;
    }
    const key = options.key();
    const verified = key === null ? ("missing" as const) : verifyHeader(key, req.headers[CLUSTER_AUTH_HEADER], req.method ?? "", path, wallClock(), options.maxSkewMs ?? DEFAULT_MAX_SKEW_MS);
    if (typeof verified === "string" || req.method !== "POST") {
      const reason = typeof verified === "string" ? verified : "malformed";
      logRefusal(req, path, reason);
      const refusal = new ReplicationRefusal("UNAUTHENTICATED", "server-to-server route: sign the request with the cluster key (client credentials do not open it)");
      // The body is not read: the connection cannot be reused.
      sendJson(res, refusal.status, refusal.toJSON(), { connection: "close" });
      return;
    }
    const body = await readBody(req, options.maxBodyBytes ?? 64 * 1024 * 1024);
    if (!verifyBody(verified, body)) {
      logRefusal(req, path, "body");
      sendJson(res, 401, new ReplicationRefusal("UNAUTHENTICATED", "the body does not match the signed digest").toJSON());
      return;
    }
    let decoded: unknown;
    try {
      decoded = JSON.parse(body.toString("utf8"));
    } catch {
      throw new ReplicationRefusal("INVALID_ARGUMENT", "replication message: the body is not JSON", { path: "(body)" });
    }
    sendJson(res, 200, store.receive(parseReplicationMessage(decoded, shard)));
  }

  return (req, res) => {
    const path = req.url ?? "";
    if (!path.startsWith(REPLICATION_PATH_PREFIX)) return false;
    serve(req, res, path).catch((err: unknown) => {
      if (err instanceof ReplicationRefusal) {
        if (err.code !== "INVALID_ARGUMENT") logger.info({ code: err.code, path: path.slice(0, 200), reason: err.message }, "replication message refused");
        return sendJson(res, err.status, err.toJSON());
      }
      if (err instanceof ClientGoneError) return;
      const status = typeof (err as { status?: unknown }).status === "number" ? (err as { status: number }).status : 500;
      if (status === 500) logger.error({ err, path: path.slice(0, 200) }, "replication route failed");
      if (!res.headersSent && !res.destroyed) sendJson(res, status, { error: { code: status === 413 ? "PAYLOAD_TOO_LARGE" : "INTERNAL", message: String((err as Error).message), details: {} } }, { connection: "close" });
    });
    return true;
  };
}
