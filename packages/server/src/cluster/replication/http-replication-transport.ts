import { Client } from "undici";
import { CLUSTER_AUTH_HEADER, signRequest } from "./cluster-key.js";
import type { ReplicationTransport } from "./replication-sender.js";
import { refusalOf, replicationPath, type ReplicationAck, type ReplicationMessage } from "./replication-wire.js";

/** Options of {@link createHttpReplicationTransport}. */

export interface HttpReplicationTransportOptions {
  /** The standby's advertised URL (`http://host:port`). */
  readonly url: string;
  /** The cluster key every request is signed with (cluster-key.ts). */
  readonly key: Buffer;
  /**
   * Longest wait for an answer before the exchange counts as failed (and is re-sent). Default
   * 3,000 ms (the default leader lease): the lateness watchdog gives up on the standby sooner.
   */
  readonly timeoutMs?: number | undefined;
  /** Wall clock for signatures (ms since the epoch). Default `Date.now`. */
  readonly wallClock?: (() => number) | undefined;
}

/**
 * Replication messages over HTTP/1.1 with undici: one keep-alive connection to the standby
 * (`Client`, no pipelining: one message in flight, in order), each request signed with the
 * cluster key. A 4xx answer with a known code is a {@link ReplicationRefusal}; anything else
 * (connection failure, timeout, 5xx) rejects as an unknown outcome.
 */
export function createHttpReplicationTransport(options: HttpReplicationTransportOptions): ReplicationTransport {
  const origin = new URL(options.url).origin;
  const timeoutMs = options.timeoutMs ?? 3_000;
  const client = new Client(origin, { pipelining: 1, headersTimeout: timeoutMs, bodyTimeout: timeoutMs, keepAliveTimeout: 30_000 });
  const wallClock = options.wallClock ?? Date.now;
  return {
    async send(message: ReplicationMessage): Promise<ReplicationAck> {
      const path = replicationPath(message.stream.shard);
      const body = Buffer.from(JSON.stringify(message), "utf8");
      const auth = signRequest(options.key, { method: "POST", path, body }, wallClock());
      const answer = await client.request({
        method: "POST",
        path,
        body,
        headers: { "content-type": "application/json", [CLUSTER_AUTH_HEADER]: auth },
      });
      const text = await answer.body.text();
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        throw new Error(`the standby at ${origin} answered ${answer.statusCode} with a body that is not JSON`);
      }
      if (answer.statusCode === 200) {
        const ackedSeq = (parsed as { ackedSeq?: unknown }).ackedSeq;
        if (typeof ackedSeq !== "number") throw new Error(`the standby at ${origin} answered 200 without ackedSeq`);
        return { ackedSeq };
      }
      const error = (parsed as { error?: unknown }).error;
      const refusal = answer.statusCode >= 400 && answer.statusCode < 500 ? refusalOf(origin, error) : null;
      if (refusal !== null) throw refusal;
      throw new Error(`the standby at ${origin} answered ${answer.statusCode} ${String((error as { code?: unknown } | undefined)?.code ?? "")}`);
    },
    // destroy, not close: an exchange in flight is abandoned (the sender ignores its answer once stopped).
    close: () => client.destroy().catch(() => undefined),
  };
}
