import type { IncomingMessage } from "node:http";
import { STATUS_CODES } from "node:http";
import { Socket } from "node:net";
import type { Duplex } from "node:stream";
import { CLUSTER_AUTH_HEADER, DEFAULT_MAX_SKEW_MS, verifyHeader } from "./cluster-key.js";
import type { StandbyFloor } from "../test-breaks.js";
import { createRefusalLog } from "./refusal-log.js";
import type { ReplicationAuthOptions } from "./replication-route.js";
import { parseReplicationMessage, ReplicationRefusal, type ReplicationMessage, type StreamIdentity } from "./replication-wire.js";
import { expandEntries, type AnswerValue } from "./stream-replication-codec.js";
import { floorAnswer } from "./standby-floor.js";
import { FrameError, FrameReader, FrameWriter, newNonce, parseStreamPath, sessionKey, STREAM_NONCE_HEADER, STREAM_PATH_PREFIX, STREAM_PROTOCOL } from "./stream-frames.js";

/** What the replication stream's route is made with. */
export interface ReplicationStreamRouteOptions extends ReplicationAuthOptions {
  /**
   * Largest frame accepted. Default 64 MiB: a snapshot carries a whole shard's table; a frame is
   * read only on a stream whose upgrade was signed with the cluster key, and its MAC checked before
   * it is parsed.
   */
  readonly maxFrameBytes?: number | undefined;
  /**
   * BENCHMARK ONLY, and unsafe (`LEASEHOLD_TEST_STANDBY_FLOOR`, test-breaks.ts). Default: none, every
   * message applied. `auth`: each entries message's MAC checked and its answer signed, its
   * acknowledgement read from its bytes and nothing applied (standby-floor.ts); `decode`: the same,
   * the message decoded and its shape checked.
   */
  readonly unsafeFloor?: StandbyFloor | undefined;
}

/** The standby's end of replication streams. */
export interface ReplicationStreamRoute {
  /**
   * Serve a server's `upgrade` event: the replication stream is upgraded, or refused with a plain
   * HTTP answer and closed; an upgrade of any other path is answered 400 (no other route upgrades).
   */
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void;
  /** Close every open stream (the server stops). */
  closeAll(): void;
}

/** A plain HTTP answer on a socket that was not upgraded, then the end of the connection. */
function refuse(socket: Duplex, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ""}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(text)}\r\nconnection: close\r\n\r\n${text}`,
  );
}

/**
 * The standby's side of `GET /v1/internal/replication-stream/{shard}?nonce=…` with
 * `Upgrade: leasehold-replication/2` (stream-replication-transport.ts is the leader's): the upgrade
 * must be signed with the cluster key, exactly as a replication POST (a client bearer token never
 * counts; a refusal is answered 401 with a log line and changes nothing). Then every frame, signed
 * with the session key (stream-frames.ts), is a replication message, applied by the replica store
 * in the order it arrived and answered in that order; the answers of the messages one read
 * completed leave in one frame and one write (stream-replication-codec.ts). A refusal is answered and ends the stream (the leader starts a new
 * one); a frame that is not signed with the session key ends it without an answer.
 */
export function createReplicationStreamRoute(options: ReplicationStreamRouteOptions): ReplicationStreamRoute {
  const { logger, store } = options;
  const wallClock = options.wallClock ?? Date.now;
  const logRefusal = createRefusalLog(logger, wallClock, options.onUnauthenticated);
  const open = new Set<Duplex>();
  const floor = options.unsafeFloor;

  function serve(socket: Duplex, shard: number, key: Buffer, head: Buffer): void {
    const writer = new FrameWriter(key, "to-leader");
    const reader = new FrameReader(key, "to-standby", options.maxFrameBytes ?? 64 * 1024 * 1024, floor === "auth");
    let ended = false;
    /** The stream the previous message named: an entries message without one continues it (stream-replication-codec.ts). */
    let previous: StreamIdentity | null = null;
    const onData = (chunk: Buffer): void => {
      if (ended) return;
      const frames = reader.push(chunk);
      const answers: AnswerValue[] = [];
      for (const frame of frames) {
        try {
          let message: ReplicationMessage;
          if (floor === undefined) message = expandEntries(parseReplicationMessage(frame, shard, previous));
          else {
            const outcome = floorAnswer(floor, frame, shard, previous);
            if (outcome.ackedSeq !== null) {
              previous = outcome.stream ?? previous;
              answers.push(outcome.ackedSeq);
              continue;
            }
            message = outcome.message;
          }
          previous = message.stream;
          answers.push(store.receive(message).ackedSeq);
        } catch (err) {
          ended = true;
          if (err instanceof FrameError) {
            // As the frame reader's own failures: not answered (see below).
            logger.warn({ shard, reason: err.message }, "replication stream closed: a frame failed its check");
            break;
          }
          if (err instanceof ReplicationRefusal) {
            if (err.code !== "INVALID_ARGUMENT") logger.info({ code: err.code, shard, reason: err.message }, "replication message refused");
            answers.push(err.toJSON());
          } else {
            logger.error({ err, shard }, "replication stream failed");
            answers.push({ error: { code: "INTERNAL", message: String((err as Error).message), details: {} } });
          }
          break;
        }
      }
      // One frame, one MAC and one write for every answer of this read.
      if (answers.length > 0) socket.write(writer.frame(answers));
      if (!ended && reader.failure !== null) {
        ended = true;
        // Not answered: whoever sent it cannot read an answer signed with the session key anyway.
        logger.warn({ shard, reason: reader.failure.message }, "replication stream closed: a frame failed its check");
      }
      if (ended) {
        // The answers written first, then the end; a peer that keeps the connection open is cut.
        socket.end();
        setTimeout(() => socket.destroy(), 1_000).unref();
      }
    };
    socket.on("data", onData);
    if (head.length > 0) onData(head);
  }

  return {
    upgrade(req, socket, head) {
      const path = req.url ?? "";
      socket.on("error", () => undefined);
      if (!path.startsWith(STREAM_PATH_PREFIX)) {
        const message = `only ${STREAM_PATH_PREFIX}{shard} (the replication stream) upgrades; send ${JSON.stringify(path.slice(0, 200))} without an Upgrade header`;
        refuse(socket, 400, { error: { code: "INVALID_ARGUMENT", message, details: { path: "upgrade" } } });
        return;
      }
      const target = parseStreamPath(path);
      if (target === null) {
        refuse(socket, 404, { error: { code: "NOT_FOUND", message: `no replication stream ${JSON.stringify(path.slice(0, 200))}; use ${STREAM_PATH_PREFIX}{shard}?nonce={32 hex digits}`, details: {} } });
        return;
      }
      const clusterKey = options.key();
      const verified = clusterKey === null ? ("missing" as const) : verifyHeader(clusterKey, req.headers[CLUSTER_AUTH_HEADER], req.method ?? "", path, wallClock(), options.maxSkewMs ?? DEFAULT_MAX_SKEW_MS);
      if (typeof verified === "string" || req.method !== "GET" || clusterKey === null) {
        logRefusal(req, path, typeof verified === "string" ? verified : "malformed");
        refuse(socket, 401, new ReplicationRefusal("UNAUTHENTICATED", "server-to-server route: sign the request with the cluster key (client credentials do not open it)").toJSON());
        return;
      }
      if (req.headers.upgrade !== STREAM_PROTOCOL) {
        refuse(socket, 400, new ReplicationRefusal("INVALID_ARGUMENT", `the replication stream upgrades to ${STREAM_PROTOCOL} (got ${JSON.stringify(req.headers.upgrade)?.slice(0, 60)})`, { path: "upgrade" }).toJSON());
        return;
      }
      const standbyNonce = newNonce();
      socket.write(`HTTP/1.1 101 Switching Protocols\r\nconnection: Upgrade\r\nupgrade: ${STREAM_PROTOCOL}\r\n${STREAM_NONCE_HEADER}: ${standbyNonce}\r\n\r\n`);
      if (socket instanceof Socket) socket.setNoDelay(true);
      open.add(socket);
      socket.once("close", () => open.delete(socket));
      serve(socket, target.shard, sessionKey(clusterKey, path, target.nonce, standbyNonce), head);
    },
    closeAll() {
      for (const socket of open) socket.destroy();
      open.clear();
    },
  };
}
