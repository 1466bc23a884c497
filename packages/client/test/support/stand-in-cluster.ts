import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { shardOf } from "@leasehold/protocol";

/** One shard's leader as the stand-ins tell it (PROTOCOL.md "Cluster mode"). */
export interface ShardLeader {
  url: string | null;
  leaderId: string | null;
  /** Grows at every change of the shard's leader (the lease row's epoch). */
  epoch: number;
}

/** The cluster's truth as a test sets it; every stand-in answers from it. */
export class ClusterState {
  readonly leaders: ShardLeader[];
  /** Shards answered 503 (leaderless), with the `retryAfterMs` to send. */
  readonly unavailable = new Map<number, number>();

  constructor(readonly shards: number) {
    this.leaders = Array.from({ length: shards }, () => ({ url: null, leaderId: null, epoch: 0 }));
  }

  shardOf(namespace: string): number {
    return shardOf(namespace, this.shards);
  }

  /** Make `url` (with `leaderId`) the leader of `namespace`'s shard, at the next epoch (or at `epoch`). */
  lead(namespace: string, url: string | null, leaderId: string | null, epoch?: number): void {
    const shard = this.shardOf(namespace);
    this.leaders[shard] = { url, leaderId, epoch: epoch ?? this.leaders[shard]!.epoch + 1 };
  }
}

/** A request a stand-in received. */
export interface Seen {
  readonly method: string;
  readonly path: string;
  readonly namespace: string | undefined;
  readonly operation: string | undefined;
  readonly body: string;
  /** performance.now() when the request had arrived whole. */
  readonly at: number;
}

/** A scripted answer that takes over from the stand-in's rules; return true when it answered. */
export type Override = (seen: Seen, res: ServerResponse, proxy: () => void) => boolean;

export interface StandIn {
  readonly url: string;
  readonly name: string;
  readonly seen: Seen[];
  /** The real server this one forwards to while it leads (set or changed by the test). */
  backendUrl: string | undefined;
  override: Override | undefined;
  /** Requests seen for an operation (e.g. "lock"), or for GET /v1/cluster with "cluster". */
  count(operation: string): number;
  close(): Promise<void>;
}

const OPERATION = /^\/v1\/namespaces\/([^/]+)\/(.+)$/;

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": String(Buffer.byteLength(text)), ...headers });
  res.end(text);
}

/**
 * A stand-in cluster member over a real socket, answering exactly what PROTOCOL.md "Cluster mode"
 * specifies from `state`: `GET /v1/cluster`; for an operation on a shard it leads, the answer of
 * its real backend server (forwarded byte for byte, so lock batches stream); on a shard marked
 * unavailable, `503 UNAVAILABLE` with `retry-after` and `details.retryAfterMs`; on any other shard,
 * `421 NOT_LEADER` with `details.shard` and the leader's URL (omitted when none is known).
 */
export async function standIn(name: string, state: ClusterState, backendUrl?: string): Promise<StandIn> {
  const seen: Seen[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      const path = req.url ?? "/";
      const match = OPERATION.exec(path);
      const entry: Seen = {
        method: req.method ?? "GET",
        path,
        namespace: match ? decodeURIComponent(match[1]!) : undefined,
        operation: match ? match[2] : path === "/v1/cluster" ? "cluster" : undefined,
        body: body.toString("utf8"),
        at: performance.now(),
      };
      seen.push(entry);
      const proxy = (): void => forward(self.backendUrl, req, body, res);
      if (self.override?.(entry, res, proxy)) return;
      if (path === "/v1/cluster") {
        sendJson(res, 200, { serverId: name, shards: state.shards, leaders: state.leaders.map((l, shard) => ({ shard, leaderUrl: l.url, leaderId: l.leaderId, epoch: l.epoch })) });
        return;
      }
      if (entry.namespace === undefined) return proxy();
      const shard = state.shardOf(entry.namespace);
      const retryAfterMs = state.unavailable.get(shard);
      if (retryAfterMs !== undefined) {
        sendJson(
          res,
          503,
          { error: { code: "UNAVAILABLE", message: `shard ${shard} has no leader right now`, details: { shard, retryAfterMs } } },
          { "retry-after": String(Math.max(1, Math.ceil(retryAfterMs / 1000))) },
        );
        return;
      }
      const leader = state.leaders[shard]!;
      if (leader.url !== self.url) {
        const details: Record<string, unknown> = { shard };
        if (leader.url !== null) details["leaderUrl"] = leader.url;
        sendJson(res, 421, { error: { code: "NOT_LEADER", message: `${name} does not lead shard ${shard}`, details } });
        return;
      }
      proxy();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const self: StandIn = {
    url: `http://127.0.0.1:${port}`,
    name,
    seen,
    backendUrl,
    override: undefined,
    count: (operation) => seen.filter((s) => s.operation === operation).length,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return self;
}

/** The request, as received, to the backend; its answer streamed back as it comes. */
function forward(backendUrl: string | undefined, req: IncomingMessage, body: Buffer, res: ServerResponse): void {
  if (backendUrl === undefined) {
    sendJson(res, 500, { error: { code: "INTERNAL", message: "stand-in has no backend", details: {} } });
    return;
  }
  const upstream = httpRequest(new URL(req.url ?? "/", backendUrl), { method: req.method, headers: { ...req.headers, host: new URL(backendUrl).host } }, (answer) => {
    res.writeHead(answer.statusCode ?? 502, answer.headers);
    answer.pipe(res);
  });
  upstream.on("error", () => res.destroy());
  res.on("close", () => upstream.destroy());
  upstream.end(body);
}
