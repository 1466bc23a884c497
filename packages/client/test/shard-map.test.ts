import type { ClusterResponse } from "@leasehold/protocol";
import { describe, expect, it } from "vitest";
import { LeaderTerms } from "../src/leader-terms.js";
import { serverTarget } from "../src/server-target.js";
import { ShardMap } from "../src/shard-map.js";

const L = "http://live:7878";
const O = "http://old:7878";
const X = "http://x:7878";

/** A map over one seed whose `GET /v1/cluster` answers are scripted by the test, one shard. */
function scripted() {
  let next: ClusterResponse | undefined;
  const terms = new LeaderTerms();
  const ended: string[] = [];
  terms.onVoid((id) => ended.push(id));
  const map = new ShardMap({
    seeds: [serverTarget(L)],
    fetch: () => (next === undefined ? Promise.reject(new Error("down")) : Promise.resolve(next)),
    terms,
    now: () => performance.now(),
    minIntervalMs: 0,
  });
  const view = async (leaderUrl: string | null, leaderId: string | null, epoch: number): Promise<void> => {
    next = { serverId: "s", shards: 1, leaders: [{ shard: 0, leaderUrl, leaderId, epoch }] };
    await map.refresh(true);
  };
  const leader = (): string | undefined => map.leader(0)?.key;
  return { map, view, leader, ended, key: (url: string) => serverTarget(url).key };
}

describe("ShardMap: views ordered by epoch", () => {
  it("an older view (a member cut off from PostgreSQL) never replaces a newer one, in either order of arrival", async () => {
    const s = scripted();
    await s.view(L, "live", 7);
    await s.view(O, "deposed", 6);
    expect(s.leader()).toBe(s.key(L));
    expect(s.ended).toEqual([]);

    const t = scripted();
    await t.view(O, "deposed", 6);
    await t.view(L, "live", 7);
    await t.view(O, "deposed", 6);
    expect(t.leader()).toBe(t.key(L));
    expect(t.ended).toEqual(["deposed"]);
  });

  it("a view of the same epoch naming no leader keeps the known one; a newer one with none clears it", async () => {
    const s = scripted();
    await s.view(L, "live", 7);
    await s.view(null, null, 7);
    expect(s.leader()).toBe(s.key(L));
    await s.view(null, null, 8);
    expect(s.leader()).toBeUndefined();
  });

  it("a 421 from another server never replaces a leader the map has from a view; one from the map's own leader does, until a newer view", async () => {
    const s = scripted();
    await s.view(L, "live", 7);
    const o = s.map.target(O)!;
    const x = s.map.target(X)!;
    const live = s.map.target(L)!;
    s.map.hint(0, o, x); // a stale member's 421
    expect(s.leader()).toBe(s.key(L));
    s.map.hint(0, live, x); // the leader itself says it no longer leads
    expect(s.leader()).toBe(s.key(X));
    await s.view(L, "live", 7); // the same view again is known out of date
    expect(s.leader()).toBe(s.key(X));
    await s.view(L, "live-2", 8);
    expect(s.leader()).toBe(s.key(L));
  });

  it("with no leader known, a 421 names one until a view does", async () => {
    const s = scripted();
    await s.view(null, null, 2);
    s.map.hint(0, s.map.target(O)!, s.map.target(X)!);
    expect(s.leader()).toBe(s.key(X));
    await s.view(L, "live", 2);
    expect(s.leader()).toBe(s.key(L));
  });
});
