import { responseValidators, type ClusterMembersResponse, type ClusterResponse } from "@leasehold/protocol";
import { describe, expect, it } from "vitest";
import { get, serversClosedAfterEach } from "../inspection/inspection-fixture.js";
import { errorOf, rawRequest } from "../support/raw-request.js";

const ADMIN = "admin-token-0123456789abcdef";
const BILLING = "billing-token-0123456789ab";

const start = serversClosedAfterEach({});

describe("GET /v1/cluster/members of a single server", () => {
  it("lists the server itself as the only member, answering and leading its one shard", async () => {
    const server = await start({});
    const res = await get(server.url, "/v1/cluster/members");
    expect(res.status).toBe(200);
    expect(responseValidators["cluster-members"].check(res.json)).toBe(true);
    const answer = res.json as ClusterMembersResponse;
    const cluster = (await get(server.url, "/v1/cluster")).json as ClusterResponse;
    expect(answer).toEqual({
      serverId: cluster.serverId,
      shards: 1,
      leaders: [{ shard: 0, leaderServerId: cluster.serverId, leaderUrl: server.url, epoch: 1, standby: null }],
      members: [{ serverId: cluster.serverId, url: server.url, self: true, ready: true, heartbeatAgeMs: null, answering: true, lastAnswerAgeMs: 0, shardsLed: 1 }],
    });
  });

  it("needs a valid token when authentication is on, like the activity feed: any namespace's token will do", async () => {
    const server = await start({ auth: { "@admin": [ADMIN], billing: [BILLING] } });
    const refused = await get(server.url, "/v1/cluster/members");
    expect(refused.status).toBe(401);
    expect(errorOf(refused).code).toBe("UNAUTHENTICATED");
    expect((await get(server.url, "/v1/cluster/members", "not-a-token-at-all-0123")).status).toBe(401);
    for (const token of [ADMIN, BILLING]) expect((await get(server.url, "/v1/cluster/members", token)).status).toBe(200);
    // The events feed is protected the same way.
    expect((await get(server.url, "/v1/events")).status).toBe(401);
  });

  it("answers 400 naming an unknown query parameter and 405 for another method; authentication comes first", async () => {
    const server = await start({ auth: { "@admin": [ADMIN] } });
    expect((await get(server.url, "/v1/cluster/members?x=1")).status).toBe(401);
    const bad = await get(server.url, "/v1/cluster/members?x=1&y=2", ADMIN);
    expect(bad.status).toBe(400);
    expect(errorOf(bad)).toMatchObject({ code: "INVALID_ARGUMENT", details: { path: "query.x" } });
    const head = await rawRequest(server.url, "/v1/cluster/members", { method: "HEAD", headers: { authorization: `Bearer ${ADMIN}` } });
    expect(head.status).toBe(405);
    expect(head.headers.allow).toBe("GET");
  });
});
