import { describe, expect, it } from "vitest";
import type { LostLock } from "../src/index.js";
import { ClusterState, type Seen, type StandIn } from "./support/stand-in-cluster.js";
import { standInKit } from "./support/stand-in-kit.js";

// PROTOCOL.md "Leader ids": a client decides a token is lost only from a refresh answer (or its
// lease running out), never from a change of leaderUrl. Over real sockets: stand-in members in
// front of real servers; a member's leaderId is its backend server's.

const NS = "orders";
const { member, client, backend } = standInKit(NS);

const refreshesOf = (m: StandIn, token: string): Seen[] => m.seen.filter((s) => s.operation === "refresh" && s.body.includes(token));
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe("held tokens across leader moves", () => {
  it("a hand-over (a new leaderUrl, the same leaderId): the held token is not lost, it is refreshed and unlocked at the new URL", async () => {
    // leaseMs 1,000, so validForMs 500: refreshed every 250 ms.
    const server = await backend(1_000);
    const state = new ClusterState(16);
    const a = await member("a", state, server.url);
    const b = await member("b", state, server.url); // the same table behind both: the table moves with the leadership
    state.lead(NS, a.url, server.leaderId);
    const c = client({ baseUrls: [a.url, b.url], requestTimeoutMs: 3_000 });
    const lost: LostLock[] = [];
    c.lostLocks.subscribe((l) => lost.push(l));
    const granted = await c.lock([{ descriptor: "o-1", mode: "exclusive" }]);
    if (granted.status !== "acquired") throw new Error("not acquired");
    expect(refreshesOf(b, granted.token)).toEqual([]);

    // The hand-over: b leads at the next epoch with the same leaderId, and a's process is gone.
    state.lead(NS, b.url, server.leaderId);
    await a.close();
    // About four refresh periods: each refresh finds a gone, is re-sent to b and answered held.
    await expect.poll(() => refreshesOf(b, granted.token).length, { timeout: 10_000 }).toBeGreaterThanOrEqual(3);
    expect(lost).toEqual([]);
    expect(c.isHeld(granted.token)).toBe(true);
    expect(server.service.snapshot(NS).heldTokens).toBe(1);
    // The map the client fetched named the same leaderId at a new URL (what it routed the refreshes by).
    expect(b.count("cluster")).toBeGreaterThan(0);
    // Unlocked at the new URL: the token was never treated as void.
    expect(await c.unlock([granted.token])).toEqual([granted.token]);
    expect(b.seen.some((s) => s.operation === "unlock" && s.body.includes(granted.token))).toBe(true);
    expect(server.service.snapshot(NS).heldTokens).toBe(0);
    expect(lost).toEqual([]);
  });

  it("a new leaderId in the map makes the client refresh at once; the token is lost exactly when that refresh answers it not held", async () => {
    // leaseMs 30,000, so validForMs 15,000: without the map the next refresh would be 7.5 s away.
    const one = await backend(30_000);
    const two = await backend(30_000);
    const state = new ClusterState(16);
    const a = await member("a", state, one.url);
    const b = await member("b", state, two.url);
    state.lead(NS, a.url, one.leaderId);
    const c = client({ baseUrls: [a.url, b.url], requestTimeoutMs: 5_000 });
    const lost: { lost: LostLock; at: number }[] = [];
    c.lostLocks.subscribe((l) => lost.push({ lost: l, at: performance.now() }));
    const granted = await c.lock([{ descriptor: "o-1", mode: "exclusive" }]);
    if (granted.status !== "acquired") throw new Error("not acquired");

    // b's refresh answers are held back until the test lets them go.
    const heldBack: (() => void)[] = [];
    b.override = (seen, _res, proxy) => {
      if (seen.operation !== "refresh") return false;
      heldBack.push(proxy);
      return true;
    };
    state.lead(NS, b.url, two.leaderId); // a new term: b's table starts empty
    const movedAt = performance.now();
    // Another call meets a's 421; the map it then fetches shows the new term.
    await c.freshTimestamp();
    await expect.poll(() => heldBack.length, { timeout: 7_500 }).toBe(1);
    // Asked at once (the next renewal was 7.5 s away), and not lost while the answer is out.
    expect(refreshesOf(b, granted.token)[0]!.at - movedAt).toBeLessThan(7_500);
    await sleep(300);
    expect(lost).toEqual([]);
    expect(c.isHeld(granted.token)).toBe(true);

    const answeredAt = performance.now();
    heldBack[0]!();
    await expect.poll(() => lost.length, { timeout: 5_000 }).toBe(1);
    expect(lost[0]!.lost).toEqual({ token: granted.token, reason: "leader-changed" });
    expect(lost[0]!.at).toBeGreaterThanOrEqual(answeredAt);
    expect(c.isHeld(granted.token)).toBe(false);
    // The old term's lock is still in its table (void for the client, it lapses there).
    expect(one.service.snapshot(NS).heldTokens).toBe(1);
  });
});
