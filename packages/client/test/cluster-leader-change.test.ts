import { describe, expect, it } from "vitest";
import { HttpLockService, isLeaseholdError, type LostLock } from "../src/index.js";
import { ClusterState, sendJson, type StandIn } from "./support/stand-in-cluster.js";
import { FAST_RETRY, standInKit } from "./support/stand-in-kit.js";

// Leader changes as a cluster client sees them, over real sockets: each stand-in member fronts its
// own real server, whose leaderId is the term of the shards that member leads.

const NS = "orders";
const RETRY = FAST_RETRY;
const { member, client, closeAfter, backend: backendWithId } = standInKit(NS);
const backend = backendWithId;

/** Two members, each over its own server; `a` leads NS with its server's leaderId. */
async function twoMembers(leaseMs: number) {
  const one = await backend(leaseMs);
  const two = await backend(leaseMs);
  const state = new ClusterState(16);
  const a = await member("a", state, one.url);
  const b = await member("b", state, two.url);
  state.lead(NS, a.url, one.leaderId);
  const moveToB = (): void => state.lead(NS, b.url, two.leaderId);
  return { one, two, state, a, b, moveToB };
}

const tokenSentIn = (members: StandIn[], operation: string, token: string): boolean =>
  members.some((m) => m.seen.some((s) => s.operation === operation && s.body.includes(token)));

describe("leader changes", () => {
  it("withLock's signal fires with leader-changed when a refresh finds the shard's new leader, and the void token is not unlocked", async () => {
    // validForMs = 2,000: the refresher renews at 1,000, the margin would fire at 1,600.
    const { one, a, b, moveToB } = await twoMembers(4_000);
    const c = client({ baseUrls: [a.url, b.url] });
    const lost: LostLock[] = [];
    c.lostLocks.subscribe((l) => lost.push(l));
    let heldFor = 0;
    let token = "";
    const result = await c.withLock([{ descriptor: "o-1", mode: "exclusive" }], { acquireTimeoutMs: 1_000 }, async (signal, lock) => {
      token = lock.token;
      const start = performance.now();
      moveToB();
      await new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true }));
      heldFor = performance.now() - start;
      return (signal.reason as { details: { reason: string } }).details.reason;
    });
    expect(result.status === "acquired" && result.value).toBe("leader-changed");
    expect(heldFor).toBeLessThan(lock2000Margin());
    expect(lost).toEqual([{ token, reason: "leader-changed" }]);
    await c.close(); // flushes withLock's tryUnlock
    expect(tokenSentIn([a, b], "refresh", token)).toBe(true); // the refresh that found the change
    expect(tokenSentIn([a, b], "unlock", token)).toBe(false); // void: not sent
    expect(one.service.snapshot(NS).heldTokens).toBe(1); // the old leader's lock lapses there
  });

  it("a leader change learned from the shard map reaches withLock at once, long before the next refresh", async () => {
    // validForMs = 15,000: the next refresh would be 7.5 s away.
    const { a, b, moveToB } = await twoMembers(30_000);
    const c = client({ baseUrls: [a.url, b.url] });
    const events: LostLock[] = [];
    c.lostLocks.subscribe((l) => events.push(l));
    let learnedIn = 0;
    const result = await c.withLock([{ descriptor: "o-1", mode: "exclusive" }], {}, async (signal) => {
      moveToB();
      const start = performance.now();
      // Another call of the client meets a 421: the map it then fetches shows the new term.
      await c.freshTimestamp();
      await new Promise((resolve) => (signal.aborted ? resolve(undefined) : signal.addEventListener("abort", resolve, { once: true })));
      learnedIn = performance.now() - start;
      return (signal.reason as { details: { reason: string } }).details.reason;
    });
    expect(result.status === "acquired" && result.value).toBe("leader-changed");
    expect(learnedIn).toBeLessThan(2_000);
    expect(events.map((e) => e.reason)).toEqual(["leader-changed"]);
  });

  it("an answer that shows a newer term (a lock granted by the new leader) voids the old term's tokens", async () => {
    const { a, b, moveToB } = await twoMembers(30_000);
    const c = client({ baseUrls: [a.url, b.url] });
    const events: LostLock[] = [];
    c.lostLocks.subscribe((l) => events.push(l));
    const first = await c.lock([{ descriptor: "o-1", mode: "exclusive" }]);
    if (first.status !== "acquired") throw new Error("not acquired");
    moveToB();
    const second = await c.lock([{ descriptor: "o-2", mode: "exclusive" }]);
    if (second.status !== "acquired") throw new Error("not acquired");
    expect(second.lease.leaderId).not.toBe(first.lease.leaderId);
    await expect.poll(() => events).toEqual([{ token: first.token, reason: "leader-changed" }]);
    expect(c.isHeld(first.token)).toBe(false);
    expect(c.isHeld(second.token)).toBe(true);
  });
});

describe("the shard map is refreshed single-flight", () => {
  it("forty calls failing at once (503) cause one refresh, and all of them then succeed", async () => {
    const server = await backend(4_000);
    const state = new ClusterState(4);
    const a = await member("a", state, server.url);
    const b = await member("b", state, server.url);
    const namespaces = Array.from({ length: 40 }, (_, i) => `ns-${i}`);
    for (const ns of namespaces) state.lead(ns, a.url, server.leaderId);
    const service = new HttpLockService({ baseUrls: [a.url, b.url], retry: RETRY });
    closeAfter(() => service.close());
    await Promise.all(namespaces.map((ns) => service.timestamps(ns, { count: 1 })));
    expect(a.count("cluster") + b.count("cluster")).toBe(1); // the first map, shared by all forty
    await pastRefreshInterval();

    const refused = new Set<string>();
    a.override = (seen, res) => {
      if (seen.operation !== "timestamps" || refused.has(seen.namespace!)) return false;
      refused.add(seen.namespace!);
      sendJson(res, 503, { error: { code: "UNAVAILABLE", message: "taking over", details: { retryAfterMs: 150 } } }, { "retry-after": "1" });
      return true;
    };
    const answers = await Promise.all(namespaces.map((ns) => service.timestamps(ns, { count: 1 })));
    expect(answers).toHaveLength(40);
    expect(refused.size).toBe(40);
    expect(a.count("cluster") + b.count("cluster")).toBe(2);
  });

  it("forty calls meeting a dead leader cause one refresh, then go to the new leader", async () => {
    const server = await backend(4_000);
    const state = new ClusterState(4);
    const a = await member("a", state, server.url);
    const b = await member("b", state, server.url);
    const namespaces = Array.from({ length: 40 }, (_, i) => `ns-${i}`);
    for (const ns of namespaces) state.lead(ns, a.url, server.leaderId);
    const service = new HttpLockService({ baseUrls: [a.url, b.url], retry: RETRY });
    closeAfter(() => service.close());
    await Promise.all(namespaces.map((ns) => service.timestamps(ns, { count: 1 })));
    await pastRefreshInterval();
    await a.close();
    for (const ns of namespaces) state.lead(ns, b.url, server.leaderId);
    const before = b.count("cluster");
    const answers = await Promise.all(namespaces.map((ns) => service.timestamps(ns, { count: 1 })));
    expect(answers).toHaveLength(40);
    expect(b.count("cluster") - before).toBe(1);
  });

  it("without retries, a 503 is the answer (UNAVAILABLE) and a 421 is still followed", async () => {
    const server = await backend(4_000);
    const state = new ClusterState(4);
    const a = await member("a", state, server.url);
    const b = await member("b", state, server.url);
    state.lead(NS, b.url, server.leaderId);
    const service = new HttpLockService({ baseUrls: [a.url, b.url], retry: false });
    closeAfter(() => service.close());
    expect((await service.timestamps(NS, { count: 1 })).count).toBe(1);
    state.unavailable.set(state.shardOf(NS), 100);
    const err = await service.timestamps(NS, { count: 1 }).catch((e: unknown) => e);
    expect(isLeaseholdError(err, "UNAVAILABLE")).toBe(true);
  });
});

/**
 * Let the shard map's minimum gap between fetches (100 ms by default) pass: a map fetched less than
 * that ago is fresh, and failures then go to the other members without a refresh. On a fast machine
 * the failure wave would otherwise land inside the gap, and the single-flight refresh under test
 * would never be asked for.
 */
function pastRefreshInterval(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 150));
}

/** withLock's margin for a 2,000 ms lease is 400 ms: the leader change must be seen before it would fire. */
function lock2000Margin(): number {
  return 2_000 - 400;
}
