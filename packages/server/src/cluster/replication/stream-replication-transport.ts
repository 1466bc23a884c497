import { request, type IncomingMessage } from "node:http";
import type { Socket } from "node:net";
import { CLUSTER_AUTH_HEADER, signRequest } from "./cluster-key.js";
import type { ReplicationTransport } from "./replication-sender.js";
import type { ReplicationAck, ReplicationMessage, StreamIdentity } from "./replication-wire.js";
import { readAnswers, toStandbyValue } from "./stream-replication-codec.js";
import { FrameReader, FrameWriter, newNonce, sessionKey, STREAM_NONCE_HEADER, STREAM_PROTOCOL, streamPath } from "./stream-frames.js";

/** Options of {@link createStreamReplicationTransport}. */
export interface StreamReplicationTransportOptions {
  /** The standby's advertised URL (`http://host:port`). */
  readonly url: string;
  /** The shard streamed (the upgrade path names it). */
  readonly shard: number;
  /** The cluster key the upgrade is signed with and the session key derived from (cluster-key.ts). */
  readonly key: Buffer;
  /**
   * Longest wait for the connection, and for the answer to the oldest message in flight, before
   * the connection counts as failed (everything in flight is re-sent on a new one). Default 3,000 ms
   * (the default leader lease): the lateness watchdog gives up on the standby sooner.
   */
  readonly timeoutMs?: number | undefined;
  /** Wall clock for the upgrade's signature (ms since the epoch). Default `Date.now`. */
  readonly wallClock?: (() => number) | undefined;
}

/** Largest answer frame read: answers are a sequence number or a refusal. */
const MAX_ANSWER_BYTES = 1024 * 1024;

interface Pending {
  readonly resolve: (ack: ReplicationAck) => void;
  readonly reject: (err: unknown) => void;
  readonly sentAt: number;
}

interface Session {
  readonly socket: Socket;
  readonly writer: FrameWriter;
  /** The stream the last message written on this connection named (stream-replication-codec.ts). */
  previous: StreamIdentity | null;
}

/**
 * Replication messages over one long-lived connection to the standby (DESIGN.md: "one
 * authenticated server-to-server connection"): an HTTP/1.1 upgrade to `leasehold-replication/2`
 * signed with the cluster key, then framed JSON both ways (stream-frames.ts, what each frame holds:
 * stream-replication-codec.ts), every frame signed with the session key. Any number of messages may be in flight; the standby applies them in the
 * order they were written and answers each in that order, so the answers are matched first in,
 * first out. A message costs one frame (an entries message of the connection's stream without its
 * stream identity), and the answers of what the standby read at once one frame back: no request
 * line, headers or per-request signature, which is what keeps a lone grant's extra round trip short.
 *
 * A refusal rejects its message with a {@link ReplicationRefusal}. A connection that fails, closes
 * or leaves the oldest message unanswered for `timeoutMs` rejects every message in flight as an
 * unknown outcome (the sender re-sends from its last acknowledgement), and the next send opens a
 * new connection.
 */
export function createStreamReplicationTransport(options: StreamReplicationTransportOptions): ReplicationTransport {
  const target = new URL(options.url);
  const origin = target.origin;
  const timeoutMs = options.timeoutMs ?? 3_000;
  const wallClock = options.wallClock ?? Date.now;
  const pending: Pending[] = [];
  let session: Promise<Session> | null = null;
  let current: Session | null = null;
  let closed = false;
  let timer: NodeJS.Timeout | null = null;

  function failAll(which: Session | null, err: Error): void {
    if (which !== null && current !== which) return;
    current = null;
    // The next send opens a new connection.
    session = null;
    which?.socket.destroy();
    if (timer !== null) clearTimeout(timer);
    timer = null;
    const all = pending.splice(0);
    for (const p of all) p.reject(err);
  }

  function armTimer(): void {
    if (timer !== null || pending.length === 0) return;
    const oldest = pending[0]!;
    timer = setTimeout(
      () => {
        timer = null;
        if (pending[0] === oldest) failAll(current, new Error(`the standby at ${origin} did not answer within ${timeoutMs} ms`));
        else armTimer();
      },
      Math.max(0, oldest.sentAt + timeoutMs - performance.now()),
    );
    timer.unref();
  }

  function open(): Promise<Session> {
    const leaderNonce = newNonce();
    const path = streamPath(options.shard, leaderNonce);
    const auth = signRequest(options.key, { method: "GET", path, body: Buffer.alloc(0) }, wallClock());
    return new Promise<Session>((resolve, reject) => {
      const req = request({
        host: target.hostname,
        port: target.port === "" ? 80 : Number(target.port),
        path,
        method: "GET",
        agent: false,
        timeout: timeoutMs,
        headers: { connection: "Upgrade", upgrade: STREAM_PROTOCOL, [CLUSTER_AUTH_HEADER]: auth },
      });
      req.once("timeout", () => req.destroy(new Error(`the standby at ${origin} did not accept the replication stream within ${timeoutMs} ms`)));
      req.once("error", reject);
      req.once("response", (res: IncomingMessage) => {
        // Not upgraded: a refusal (401 …) or a server without the route.
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.once("end", () => {
          let parsed: unknown = null;
          try {
            parsed = JSON.parse(Buffer.concat(chunks).toString("utf8"));
          } catch {
            // not JSON: reported by status below
          }
          const answer = readAnswers(origin, parsed)[0]!;
          reject(answer instanceof Error ? answer : new Error(`the standby at ${origin} answered the upgrade with ${res.statusCode}`));
        });
      });
      req.once("upgrade", (res: IncomingMessage, socket: Socket, head: Buffer) => {
        if (closed) {
          socket.destroy();
          reject(new Error("the replication transport is closed"));
          return;
        }
        const standbyNonce = res.headers[STREAM_NONCE_HEADER];
        if (typeof standbyNonce !== "string" || !/^[0-9a-f]{32}$/.test(standbyNonce)) {
          socket.destroy();
          reject(new Error(`the standby at ${origin} upgraded without a nonce`));
          return;
        }
        socket.setNoDelay(true);
        socket.setTimeout(0);
        const key = sessionKey(options.key, path, leaderNonce, standbyNonce);
        const made: Session = { socket, writer: new FrameWriter(key, "to-standby"), previous: null };
        const reader = new FrameReader(key, "to-leader", MAX_ANSWER_BYTES);
        const onData = (chunk: Buffer): void => {
          for (const frame of reader.push(chunk)) {
            for (const outcome of readAnswers(origin, frame)) {
              const p = pending.shift();
              if (p === undefined) return failAll(made, new Error(`the standby at ${origin} answered a message that was not sent`));
              if (outcome instanceof Error) p.reject(outcome);
              else p.resolve(outcome);
            }
          }
          if (reader.failure !== null) return failAll(made, reader.failure);
          if (timer !== null) clearTimeout(timer);
          timer = null;
          armTimer();
        };
        socket.on("data", onData);
        socket.once("close", () => failAll(made, new Error(`the replication stream to ${origin} closed`)));
        socket.on("error", () => undefined); // 'close' follows and rejects what is in flight
        current = made;
        if (head.length > 0) onData(head);
        resolve(made);
      });
      req.end();
    });
  }

  return {
    async send(message: ReplicationMessage): Promise<ReplicationAck> {
      if (closed) throw new Error("the replication transport is closed");
      if (session === null) {
        const opening = open();
        session = opening;
        // A failed open is forgotten, so the next send (the sender's retry) opens again.
        opening.catch(() => {
          if (session === opening) session = null;
        });
      }
      const held = session;
      const made = await held;
      if (closed) throw new Error("the replication transport is closed");
      if (current !== made) {
        // The connection failed after it was made: the next send opens a new one.
        if (session === held) session = null;
        throw new Error(`the replication stream to ${origin} closed`);
      }
      return new Promise<ReplicationAck>((resolve, reject) => {
        pending.push({ resolve, reject, sentAt: performance.now() });
        made.socket.write(made.writer.frame(toStandbyValue(message, made.previous)));
        made.previous = message.stream;
        armTimer();
      });
    },
    close(): Promise<void> {
      closed = true;
      failAll(current, new Error("the replication transport is closed"));
      return Promise.resolve();
    },
  };
}
