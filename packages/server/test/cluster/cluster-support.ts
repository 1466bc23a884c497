import { shardOf, type ClusterResponse } from "@leasehold/protocol";
import { rawRequest, type RawResponse } from "../support/raw-request.js";
import { sleep } from "../support/wait-for.js";

/** POST one operation; answers status, headers and parsed body. */
export function op(url: string, namespace: string, operation: string, body: unknown): Promise<RawResponse> {
  return rawRequest(url, `/v1/namespaces/${namespace}/${operation}`, { headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
}

/** `GET /v1/cluster` of one server. */
export async function clusterOf(url: string): Promise<ClusterResponse> {
  return (await rawRequest(url, "/v1/cluster", { method: "GET" })).json as ClusterResponse;
}

/** Who leads each shard in `map` (its standbys left out: the leader's own view of them is a pass ahead of the others'). */
function leadership(map: ClusterResponse): string {
  return JSON.stringify(map.leaders.map(({ shard, leaderUrl, leaderId, epoch }) => ({ shard, leaderUrl, leaderId, epoch })));
}

/** Wait until every server's map names a leader for every shard and the maps agree on who leads. */
export async function settled(urls: readonly string[], timeoutMs = 10_000, each: (map: ClusterResponse) => boolean = () => true): Promise<ClusterResponse> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const maps = await Promise.all(urls.map(clusterOf));
    const first = maps[0]!;
    // A server that has not joined yet answers 503 (no map): not settled, ask again.
    const joined = maps.every((m) => Array.isArray(m.leaders));
    const agree = joined && maps.every((m) => leadership(m) === leadership(first));
    if (agree && first.leaders.every((l) => l.leaderUrl !== null) && maps.every(each)) return first;
    if (Date.now() > deadline) throw new Error(`cluster did not settle: ${JSON.stringify(maps)}`);
    await sleep(25);
  }
}

/** A namespace whose shard `map` says `leaderUrl` leads. */
export function namespaceLedBy(map: ClusterResponse, leaderUrl: string, prefix = "ns"): string {
  for (let i = 0; i < 10_000; i++) {
    const ns = `${prefix}-${i}`;
    if (map.leaders[shardOf(ns, map.shards)]!.leaderUrl === leaderUrl) return ns;
  }
  throw new Error(`no namespace led by ${leaderUrl}`);
}

/** How many shards `url` leads in `map`. */
export function ledBy(map: ClusterResponse, url: string): number {
  return map.leaders.filter((l) => l.leaderUrl === url).length;
}
