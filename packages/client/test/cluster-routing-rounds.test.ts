import { describe, expect, it } from "vitest";
import { ClusterState, sendJson } from "./support/stand-in-cluster.js";
import { standInKit } from "./support/stand-in-kit.js";

// The router's budget and rounds, over real sockets (support/stand-in-cluster.ts): waiting for the
// first shard map is part of a call's deadline, and each backoff starts a new round in which 421s
// are followed again.

const NS = "orders";
const { member, client, backend } = standInKit(NS);

/** Answer `res` with `421 NOT_LEADER` naming `leaderUrl`. */
function notLeader(res: import("node:http").ServerResponse, shard: number, leaderUrl: string): void {
  sendJson(res, 421, { error: { code: "NOT_LEADER", message: "not the leader", details: { shard, leaderUrl } } });
}

describe("cluster routing: the call's own deadline covers the first shard map", () => {
  it("a lock is sent within its acquireTimeoutMs while the first member's GET /v1/cluster hangs", async () => {
    const server = await backend(4_000);
    const state = new ClusterState(8);
    const a = await member("a", state, server.url);
    const b = await member("b", state, server.url);
    state.lead(NS, a.url, "term-1");
    // a never answers the map: the fetch waits the map timeout (2 s) there before asking b.
    a.override = (seen) => seen.operation === "cluster";
    const c = client({ baseUrls: [a.url, b.url] });
    const started = performance.now();
    const answer = await c.lock([{ descriptor: "o-1", mode: "exclusive" }], { acquireTimeoutMs: 300 });
    const took = performance.now() - started;
    expect(answer.status).toBe("acquired");
    // Without the map the call went to the members in turn; it did not wait the 2 s map timeout.
    expect(took).toBeLessThan(1_500);
    expect(a.count("lock")).toBe(1);
  });
});

describe("cluster routing: rounds", () => {
  it("after a backoff, 421s are followed again (the hop count starts afresh each round)", async () => {
    const server = await backend(4_000);
    const state = new ClusterState(8);
    // The map names a leader that is gone (connection refused): every round starts with it, fails
    // there, and goes to the members in turn, where only 421s lead to the real leader.
    const gone = await member("gone", state);
    const goneUrl = gone.url;
    await gone.close();
    const x = await member("x", state);
    const y = await member("y", state);
    const z = await member("z", state, server.url);
    state.lead(NS, goneUrl, "term-1", 3);
    const shard = state.shardOf(NS);
    // x and y disagree at first (x names y, y names x: the first round spends its hops between
    // them); from its fourth request on, x names z, the real leader.
    let xRequests = 0;
    x.override = (seen, res) => {
      if (seen.operation !== "timestamps") return false;
      notLeader(res, shard, ++xRequests <= 3 ? y.url : z.url);
      return true;
    };
    y.override = (seen, res) => {
      if (seen.operation !== "timestamps") return false;
      notLeader(res, shard, x.url);
      return true;
    };
    z.override = (seen, res, proxy) => {
      if (seen.operation !== "timestamps") return false;
      proxy();
      return true;
    };
    const c = client({ baseUrls: [x.url, y.url, z.url], requestTimeoutMs: 2_000 });
    const answer = await c.freshTimestamp().catch((err: unknown) => err);
    expect(typeof answer).toBe("number");
    expect(xRequests).toBe(4); // three in the first round, one in the second: then followed to z
    expect(z.count("timestamps")).toBe(1);
  });
});

