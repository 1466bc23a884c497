import type { ServerResponse } from "node:http";
import { describe, expect, it } from "vitest";
import type { LostLock } from "../src/index.js";
import { ClusterState, sendJson, type Seen, type StandIn } from "./support/stand-in-cluster.js";
import { standInKit } from "./support/stand-in-kit.js";

// A member cut off from PostgreSQL keeps answering GET /v1/cluster and 421s from its last view
// (PROTOCOL.md "Cluster mode"); its view has an older epoch than the live leader's. Over real
// sockets: the live leader is a stand-in over a real server, the stale member a stand-in with its
// own (old) state, and the leader that view names is partitioned away: it takes connections and
// never answers.

const NS = "orders";
const { member, client, backend } = standInKit(NS);

/** Lets the map's 100 ms gap between fetches pass, so the next failure fetches it again. */
const pastRefreshInterval = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 150));

/** A 503 with a short retryAfterMs: the call backs off a moment, and the shard map is fetched again. */
function unavailable(res: ServerResponse): void {
  sendJson(res, 503, { error: { code: "UNAVAILABLE", message: "a moment", details: { retryAfterMs: 10 } } }, { "retry-after": "1" });
}

/** Answer the next `timestamps` call at `member` with one 503, then let calls through again. */
function oneUnavailable(m: StandIn): void {
  const previous = m.override;
  m.override = (seen, res, proxy) => {
    if (seen.operation !== "timestamps") return previous?.(seen, res, proxy) ?? false;
    m.override = previous;
    unavailable(res);
    return true;
  };
}

const refreshesOf = (m: StandIn, token: string): Seen[] => m.seen.filter((s) => s.operation === "refresh" && s.body.includes(token));

/** The live leader (`live`, over a real server) of NS at epoch 7; the stale member's view: NS led at epoch 6 by `gone`. */
async function liveAndStale(leaseMs: number) {
  const server = await backend(leaseMs);
  const live = new ClusterState(16);
  const stale = new ClusterState(16);
  const leader = await member("live", live, server.url);
  const gone = await member("gone", new ClusterState(16));
  gone.override = () => true; // partitioned away: the request is read, never answered
  const cutOff = await member("cut-off", stale);
  live.lead(NS, leader.url, server.leaderId, 7);
  stale.lead(NS, gone.url, "deposed-term", 6);
  return { server, live, leader, gone, cutOff };
}

describe("stale shard maps", () => {
  it("a lock granted by the live leader is never reported lost while a stale member's older view is fetched again and again", async () => {
    // leaseMs 2,000, so validForMs 1,000: refreshed every 500 ms (a second of slack for a loaded
    // machine's late timer, where 1,000 gave 250 ms). A refresh sent to the partitioned leader
    // would hang for requestTimeoutMs (3 s), past the lease: reported lease-expired.
    const { server, leader, gone, cutOff } = await liveAndStale(2_000);
    const c = client({ baseUrls: [leader.url, cutOff.url], requestTimeoutMs: 3_000 });
    const lost: LostLock[] = [];
    c.lostLocks.subscribe((l) => lost.push(l));
    const granted = await c.lock([{ descriptor: "o-1", mode: "exclusive" }]);
    if (granted.status !== "acquired") throw new Error("not acquired");
    expect(granted.lease.leaderId).toBe(server.leaderId);

    // From now on the live leader answers GET /v1/cluster with 503, so every fetch of the map ends
    // at the cut-off member (which then answers first), while operations still reach the live leader.
    leader.override = (seen, res) => {
      if (seen.operation !== "cluster") return false;
      unavailable(res);
      return true;
    };
    const before = cutOff.count("cluster");
    const failedCalls: unknown[] = [];
    for (let round = 0; round < 8 && lost.length === 0; round++) {
      await pastRefreshInterval();
      oneUnavailable(leader);
      // The 503 makes the client fetch the map (from the cut-off member) and re-send.
      await c.freshTimestamp().catch((err: unknown) => failedCalls.push(err));
      await new Promise((resolve) => setTimeout(resolve, 400));
    }
    expect(lost).toEqual([]);
    expect(failedCalls).toEqual([]);
    // The stale view was fetched several times over about two lease periods...
    expect(cutOff.count("cluster") - before).toBeGreaterThanOrEqual(3);
    // ...and the lock is still held, refreshed by the live leader all along.
    expect(c.isHeld(granted.token)).toBe(true);
    expect(refreshesOf(leader, granted.token).length).toBeGreaterThanOrEqual(4);
    expect(server.service.snapshot(NS).heldTokens).toBe(1);
    // No call was routed by the stale view.
    expect(gone.seen.filter((s) => s.operation !== "cluster")).toEqual([]);
    expect(cutOff.seen.filter((s) => s.operation !== "cluster")).toEqual([]);
  });

  it("a newer view naming another term makes the client refresh that term's tokens at once; only the refresh answer decides they are lost", async () => {
    // leaseMs 30,000, so validForMs 15,000: the next refresh would be 7.5 s away.
    const { server, live, leader } = await liveAndStale(30_000);
    const other = await member("other", live); // a second member with the live view
    const c = client({ baseUrls: [leader.url, other.url], requestTimeoutMs: 3_000 });
    const lost: LostLock[] = [];
    c.lostLocks.subscribe((l) => lost.push(l));
    const granted = await c.lock([{ descriptor: "o-1", mode: "exclusive" }]);
    if (granted.status !== "acquired") throw new Error("not acquired");

    // A newer view that is wrong (the server behind the leader still holds the term): the
    // client learns of a "new term" from the map alone.
    live.lead(NS, leader.url, "not-really-a-new-term", 8);
    await pastRefreshInterval();
    const refreshesBefore = refreshesOf(leader, granted.token).length;
    oneUnavailable(leader);
    await c.freshTimestamp();
    // The token is refreshed at once (not 7.5 s later), and since the refresh finds it held, it is not lost.
    await expect.poll(() => lost.length > 0 || refreshesOf(leader, granted.token).length > refreshesBefore, { timeout: 2_000 }).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(lost).toEqual([]);
    expect(refreshesOf(leader, granted.token).length).toBeGreaterThan(refreshesBefore);
    expect(c.isHeld(granted.token)).toBe(true);
    expect(server.service.snapshot(NS).heldTokens).toBe(1);
  });
});
