import type { IncomingMessage, ServerResponse } from "node:http";
import { LeaseholdError, type ClusterMembersResponse, type ClusterResponse } from "@leasehold/protocol";
import { sendJson, type ExtraHeaders } from "../support/send-json.js";
import { queryOf } from "./query-of.js";

/**
 * The members answer of a server that is not in a cluster, built from its `GET /v1/cluster`
 * answer: itself, the only member, answering and leading its one shard.
 */
export function singleServerMembers(cluster: ClusterResponse, url: string): ClusterMembersResponse {
  return {
    serverId: cluster.serverId,
    shards: cluster.shards,
    leaders: cluster.leaders.map((l) => ({ shard: l.shard, leaderServerId: cluster.serverId, leaderUrl: l.leaderUrl, epoch: l.epoch, standby: null })),
    members: [{ serverId: cluster.serverId, url, self: true, ready: true, heartbeatAgeMs: null, answering: true, lastAnswerAgeMs: 0, shardsLed: cluster.shards }],
  };
}

/**
 * Serve `GET /v1/cluster/members` (docs/protocol.md "Cluster members"). It takes no query
 * parameters: any one is answered 400 naming it, before anything is read or probed. Admission has
 * already checked the credential (any valid token, like the activity feed).
 */
export async function serveClusterMembers(req: IncomingMessage, res: ServerResponse, members: () => Promise<ClusterMembersResponse>, headers: ExtraHeaders): Promise<void> {
  for (const [name] of queryOf(req.url)) {
    const shown = JSON.stringify(name).slice(1, -1).slice(0, 64);
    throw new LeaseholdError("INVALID_ARGUMENT", `query parameter ${shown} is not a known parameter of GET /v1/cluster/members (it takes none)`, { path: `query.${shown}` });
  }
  sendJson(res, 200, await members(), headers);
}
