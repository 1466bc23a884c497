import type { RunningServer } from "@leasehold/server";
import { describe, expect, it } from "vitest";
import { LockClient, isLeaseholdError, type HttpLockClientOptions } from "../src/index.js";
import { ClusterState, sendJson, type Seen, type StandIn } from "./support/stand-in-cluster.js";
import { standInKit } from "./support/stand-in-kit.js";

// Client routing over real sockets: stand-in cluster members (support/stand-in-cluster.ts) answer
// what PROTOCOL.md "Cluster mode" specifies and forward the shards they lead to real servers.

const NS = "orders";
const { member, client, backend: backendWithId } = standInKit(NS);
const backend = (): Promise<RunningServer> => backendWithId(4_000);

function acquired<T extends { status: string }>(answer: T): Extract<T, { status: "acquired" }> {
  if (answer.status !== "acquired") throw new Error(`expected acquired, got ${JSON.stringify(answer)}`);
  return answer as Extract<T, { status: "acquired" }>;
}

const lockBodies = (s: StandIn): { requestId?: string; acquireTimeoutMs?: number }[] =>
  s.seen.filter((r) => r.operation === "lock").map((r) => JSON.parse(r.body) as { requestId?: string; acquireTimeoutMs?: number });

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  throw new Error("expected a rejection");
}

/** Answer `res` from the backend, then cut the connection instead of delivering it: the grant happened, the client never saw it. */
function forwardThenCut(backendUrl: string, seen: Seen, res: import("node:http").ServerResponse): void {
  void fetch(backendUrl + seen.path, { method: "POST", body: seen.body, headers: { "content-type": "application/json" } })
    .then((r) => r.text())
    .then(() => res.socket?.destroy());
}

/** Thirty concurrent locks (most of them batched), all granted once at `server`. */
async function thirtyLocksGranted(c: LockClient, server: RunningServer): Promise<void> {
  const answers = await Promise.all(Array.from({ length: 30 }, (_, i) => c.lock([{ descriptor: `d-${i}`, mode: "exclusive" }], { acquireTimeoutMs: 2_000 })));
  expect(answers.every((x) => x.status === "acquired")).toBe(true);
  expect(server.service.snapshot(NS).heldTokens).toBe(30);
}

/**
 * The leader refuses the first lock batch with `refuse`; thirty locks must still all be granted.
 * Returns the refused batch's requestIds and, per requestId, the wait of its lone re-send.
 */
async function firstBatchRefused(refuse: (seen: Seen, res: import("node:http").ServerResponse, state: ClusterState) => void) {
  const server = await backend();
  const state = new ClusterState(8);
  const a = await member("a", state, server.url);
  state.lead(NS, a.url, "term-1");
  let refused: Seen | undefined;
  a.override = (seen, res) => {
    if (seen.operation !== "lock-batch" || refused !== undefined) return false;
    refused = seen;
    refuse(seen, res, state);
    return true;
  };
  await thirtyLocksGranted(client({ baseUrls: [a.url, (await member("b", state, server.url)).url] }), server);
  if (refused === undefined) throw new Error("no lock batch was sent");
  const refusedIds = (JSON.parse(refused.body) as { requests: { requestId: string }[] }).requests.map((r) => r.requestId);
  return { refusedIds, alone: new Map(lockBodies(a).map((x) => [x.requestId, x.acquireTimeoutMs])) };
}

describe("cluster routing: 421 NOT_LEADER", () => {
  it("follows 421 to leaderUrl with the same requestId, then goes straight to the leader", async () => {
    const server = await backend();
    const state = new ClusterState(8);
    const a = await member("a", state, server.url);
    const b = await member("b", state, server.url);
    state.lead(NS, a.url, "term-1");
    const c = client({ baseUrls: [a.url, b.url] });
    acquired(await c.lock([{ descriptor: "warm", mode: "exclusive" }])); // loads the map: a leads
    expect(a.count("cluster") + b.count("cluster")).toBe(1);
    state.lead(NS, b.url, "term-1"); // leadership moved; the client's map is now stale

    const lock = acquired(await c.lock([{ descriptor: "o-1", mode: "exclusive" }], { requestId: "req-421" }));
    const atA = lockBodies(a).filter((r) => r.requestId === "req-421");
    const atB = lockBodies(b).filter((r) => r.requestId === "req-421");
    expect(atA).toHaveLength(1); // answered 421, changed nothing
    expect(atB).toHaveLength(1); // the same request, re-sent to the leader
    expect(server.service.snapshot(NS).descriptors.find((d) => d.descriptor === "o-1")?.holders).toHaveLength(1);

    const before = a.seen.length;
    acquired(await c.lock([{ descriptor: "o-2", mode: "exclusive" }]));
    expect(await c.unlock([lock.token])).toEqual([lock.token]);
    expect(a.seen.slice(before).filter((r) => r.namespace === NS)).toEqual([]); // straight to b now
  });

  it("never acquires twice when the leader's answer is lost after a 421 hop (re-sent with the same requestId)", async () => {
    const server = await backend();
    const state = new ClusterState(8);
    const a = await member("a", state, server.url);
    const b = await member("b", state, server.url);
    state.lead(NS, a.url, "term-1");
    const c = client({ baseUrls: [a.url, b.url] });
    acquired(await c.lock([{ descriptor: "warm", mode: "exclusive" }]));
    state.lead(NS, b.url, "term-1");
    let cut = false;
    b.override = (seen, res) => {
      if (seen.operation !== "lock" || cut) return false;
      cut = true;
      forwardThenCut(server.url, seen, res);
      return true;
    };
    const lock = acquired(await c.lock([{ descriptor: "o-1", mode: "exclusive" }], { requestId: "req-cut", acquireTimeoutMs: 3_000 }));
    const atB = lockBodies(b).filter((r) => r.requestId === "req-cut");
    expect(atB.length).toBeGreaterThanOrEqual(2); // the cut one and at least one re-send
    const snapshot = server.service.snapshot(NS);
    expect(snapshot.descriptors.find((d) => d.descriptor === "o-1")?.holders).toHaveLength(1);
    expect(snapshot.heldTokens).toBe(2); // "warm" and one token for o-1
    expect(await c.unlock([lock.token])).toEqual([lock.token]);
    expect(server.service.snapshot(NS).heldTokens).toBe(1);
  });

  it("routes lock batches: concurrent locks after a leader move are all granted once, at the leader", async () => {
    const server = await backend();
    const state = new ClusterState(8);
    const a = await member("a", state, server.url);
    const b = await member("b", state, server.url);
    state.lead(NS, a.url, "term-1");
    const c = client({ baseUrls: [a.url, b.url] });
    acquired(await c.lock([{ descriptor: "warm", mode: "exclusive" }]));
    state.lead(NS, b.url, "term-1");
    const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => c.lock([{ descriptor: `d-${i}`, mode: "exclusive" }], { acquireTimeoutMs: 2_000 })));
    expect(answers.every((x) => x.status === "acquired")).toBe(true);
    expect(server.service.snapshot(NS).heldTokens).toBe(41);
    expect(b.count("lock-batch")).toBeGreaterThan(0); // the batches reached the leader
  });

  it("a single baseUrl that answers 421 switches the client to routing (and asks for the map only then)", async () => {
    const server = await backend();
    const state = new ClusterState(8);
    const a = await member("a", state, server.url);
    const b = await member("b", state, server.url);
    state.lead(NS, b.url, "term-1");
    const c = client({ baseUrl: a.url });
    const lock = acquired(await c.lock([{ descriptor: "o-1", mode: "exclusive" }]));
    expect(a.count("lock")).toBe(1);
    expect(b.count("lock")).toBe(1);
    expect(await c.unlock([lock.token])).toEqual([lock.token]);
    expect(a.count("unlock")).toBe(0);
    await expect.poll(() => a.count("cluster") + b.count("cluster")).toBeGreaterThan(0);
  });

  it("a single baseUrl whose first request is a lock batch answered 421 switches too (nothing ran there)", async () => {
    const server = await backend();
    const state = new ClusterState(8);
    const a = await member("a", state, server.url);
    const b = await member("b", state, server.url);
    state.lead(NS, b.url, "term-1");
    await thirtyLocksGranted(client({ baseUrl: a.url }), server);
    expect(a.count("lock-batch")).toBeGreaterThanOrEqual(1);
    expect(b.count("lock-batch")).toBeGreaterThanOrEqual(1);
  });

  it("batch entries answered NOT_LEADER on their lines are re-sent alone, routed, with their requestId", async () => {
    const { refusedIds, alone } = await firstBatchRefused((seen, res, state) => {
      // The leader lost the shard right after it read the batch.
      const { requests } = JSON.parse(seen.body) as { requests: unknown[] };
      res.writeHead(200, { "content-type": "application/x-ndjson" });
      res.end(requests.map((_, index) => JSON.stringify({ index, error: { code: "NOT_LEADER", message: "lost the shard", details: { shard: state.shardOf(NS) } } }) + "\n").join(""));
    });
    for (const id of refusedIds) expect(alone.has(id)).toBe(true);
  });

  it("a lock batch answered 503 is not slept on: its entries go alone, routed, each with what is left of its wait", async () => {
    const { refusedIds, alone } = await firstBatchRefused((_seen, res) =>
      sendJson(res, 503, { error: { code: "UNAVAILABLE", message: "taking over", details: { retryAfterMs: 100 } } }, { "retry-after": "1" }),
    );
    for (const id of refusedIds) expect(alone.get(id)).toBeLessThanOrEqual(2_000);
  });

  it("a 421 naming no leader, everywhere, ends as NOT_LEADER at the call's deadline", async () => {
    const server = await backend();
    const state = new ClusterState(8);
    const a = await member("a", state, server.url);
    const b = await member("b", state, server.url);
    const c = client({ baseUrls: [a.url, b.url] });
    const started = performance.now();
    const err = await rejection(c.lock([{ descriptor: "o-1", mode: "exclusive" }], { acquireTimeoutMs: 600 }));
    expect(isLeaseholdError(err, "NOT_LEADER")).toBe(true);
    expect(performance.now() - started).toBeLessThan(600 + 500);
  });
});

describe("cluster routing: 503 and connection failures", () => {
  it("backs off within the lock's deadline, honours retryAfterMs, keeps the requestId and shrinks the wait", async () => {
    const server = await backend();
    const state = new ClusterState(8);
    const a = await member("a", state, server.url);
    const b = await member("b", state, server.url);
    state.lead(NS, a.url, "term-1");
    state.unavailable.set(state.shardOf(NS), 300);
    const c = client({ baseUrls: [a.url, b.url] });
    const started = performance.now();
    const err = await rejection(c.lock([{ descriptor: "o-1", mode: "exclusive" }], { acquireTimeoutMs: 1_500, requestId: "req-503" }));
    const elapsed = performance.now() - started;
    expect(isLeaseholdError(err, "UNAVAILABLE")).toBe(true);
    expect(elapsed).toBeLessThan(1_500 + 500); // settles by the deadline plus a small bound
    const attempts = [...a.seen, ...b.seen].filter((s) => s.operation === "lock").sort((x, y) => x.at - y.at);
    expect(attempts.length).toBeGreaterThanOrEqual(3);
    expect(attempts.length).toBeLessThanOrEqual(6); // 1,500 ms / 300 ms, plus the first
    for (let i = 1; i < attempts.length; i++) expect(attempts[i]!.at - attempts[i - 1]!.at).toBeGreaterThanOrEqual(295);
    const bodies = attempts.map((s) => JSON.parse(s.body) as { requestId: string; acquireTimeoutMs: number });
    expect(new Set(bodies.map((x) => x.requestId))).toEqual(new Set(["req-503"]));
    for (let i = 1; i < bodies.length; i++) expect(bodies[i]!.acquireTimeoutMs).toBeLessThan(bodies[i - 1]!.acquireTimeoutMs);
  });

  it("is granted once the shard is served again, within the deadline", async () => {
    const server = await backend();
    const state = new ClusterState(8);
    const a = await member("a", state, server.url);
    const b = await member("b", state, server.url);
    state.lead(NS, a.url, "term-1");
    let refused = 0;
    a.override = (seen, res) => {
      if (seen.operation !== "lock" || refused >= 2) return false;
      refused++;
      sendJson(res, 503, { error: { code: "UNAVAILABLE", message: "taking over", details: { retryAfterMs: 100 } } }, { "retry-after": "1" });
      return true;
    };
    const c = client({ baseUrls: [a.url, b.url] });
    const started = performance.now();
    acquired(await c.lock([{ descriptor: "o-1", mode: "exclusive" }], { acquireTimeoutMs: 5_000 }));
    expect(performance.now() - started).toBeGreaterThanOrEqual(195);
    expect(refused).toBe(2);
    expect(new Set(lockBodies(a).map((x) => x.requestId)).size).toBe(1);
    expect(server.service.snapshot(NS).heldTokens).toBe(1);
  });

  it("honours the retry-after header when the body has no retryAfterMs", async () => {
    const server = await backend();
    const state = new ClusterState(8);
    const a = await member("a", state, server.url);
    state.lead(NS, a.url, "term-1");
    let refused = 0;
    a.override = (seen, res) => {
      if (seen.operation !== "timestamps" || refused >= 1) return false;
      refused++;
      sendJson(res, 503, { error: { code: "UNAVAILABLE", message: "busy", details: {} } }, { "retry-after": "1" });
      return true;
    };
    const c = client({ baseUrls: [a.url, (await member("b", state)).url] });
    await c.freshTimestamp(); // loads the map
    refused = 0;
    const started = performance.now();
    await c.freshTimestamp();
    expect(performance.now() - started).toBeGreaterThanOrEqual(995);
  });

  it("a call that is not a lock keeps re-sending for requestTimeoutMs, then fails UNAVAILABLE", async () => {
    const server = await backend();
    const state = new ClusterState(8);
    const a = await member("a", state, server.url);
    const b = await member("b", state, server.url);
    state.lead(NS, a.url, "term-1");
    state.unavailable.set(state.shardOf(NS), 50);
    const c = client({ baseUrls: [a.url, b.url], requestTimeoutMs: 800 });
    const started = performance.now();
    const err = await rejection(c.freshTimestamp());
    expect(isLeaseholdError(err, "UNAVAILABLE")).toBe(true);
    const elapsed = performance.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(300);
    expect(elapsed).toBeLessThan(800 + 500);
    expect(a.count("timestamps") + b.count("timestamps")).toBeGreaterThanOrEqual(3);
  });

  it("the caller's signal ends a backoff at once (CANCELLED)", async () => {
    const server = await backend();
    const state = new ClusterState(8);
    const a = await member("a", state, server.url);
    const b = await member("b", state, server.url);
    state.lead(NS, a.url, "term-1");
    state.unavailable.set(state.shardOf(NS), 5_000);
    const c = client({ baseUrls: [a.url, b.url] });
    const started = performance.now();
    const err = await rejection(c.lock([{ descriptor: "o-1", mode: "exclusive" }], { acquireTimeoutMs: 30_000, signal: AbortSignal.timeout(300) }));
    expect(isLeaseholdError(err, "CANCELLED")).toBe(true);
    expect(performance.now() - started).toBeLessThan(300 + 400);
  });

  it("a 503 from a member when no leader is known is retried on another member", async () => {
    const server = await backend();
    const state = new ClusterState(8); // the map knows no leader for the shard
    const a = await member("a", state, server.url);
    const b = await member("b", state, server.url);
    a.override = (seen, res) => {
      if (seen.operation !== "lock") return false;
      sendJson(res, 503, { error: { code: "UNAVAILABLE", message: "no leader", details: { retryAfterMs: 50 } } }, { "retry-after": "1" });
      return true;
    };
    b.override = (seen, _res, proxy) => (seen.operation === "lock" ? (proxy(), true) : false); // b has just taken the shard
    const c = client({ baseUrls: [a.url, b.url] });
    acquired(await c.lock([{ descriptor: "o-1", mode: "exclusive" }], { acquireTimeoutMs: 2_000 }));
    expect(a.count("lock")).toBe(1);
    expect(b.count("lock")).toBe(1);
  });

  it("a refused connection to one server is re-sent at once to another", async () => {
    const server = await backend();
    const state = new ClusterState(8);
    const a = await member("a", state, server.url);
    const b = await member("b", state, server.url);
    state.lead(NS, a.url, "term-1");
    const c = client({ baseUrls: [a.url, b.url] });
    acquired(await c.lock([{ descriptor: "warm", mode: "exclusive" }])); // map: a leads
    await a.close(); // a is gone; b takes the shard
    state.lead(NS, b.url, "term-1");
    const started = performance.now();
    acquired(await c.lock([{ descriptor: "o-1", mode: "exclusive" }], { acquireTimeoutMs: 0 }));
    expect(performance.now() - started).toBeLessThan(1_000); // no backoff: another server was there
    expect(b.count("lock")).toBe(1);
  });

  it("a dead first base URL: the map and the calls come from the next one", async () => {
    const server = await backend();
    const state = new ClusterState(8);
    const dead = await member("dead", state);
    const deadUrl = dead.url;
    await dead.close();
    const b = await member("b", state, server.url);
    state.lead(NS, b.url, "term-1");
    const c = client({ baseUrls: [deadUrl, b.url] });
    acquired(await c.lock([{ descriptor: "o-1", mode: "exclusive" }]));
    expect(await c.freshTimestamp()).toBeGreaterThan(0);
    expect(b.count("cluster")).toBe(1);
  });
});

describe("one server", () => {
  it("baseUrl, or baseUrls of one: no map is asked for and every call goes to that server", async () => {
    const server = await backend();
    const state = new ClusterState(1);
    for (const form of ["baseUrl", "baseUrls"] as const) {
      const a = await member(`single-${form}`, state, server.url);
      state.lead(NS, a.url, "term-1");
      const c = client(form === "baseUrl" ? { baseUrl: a.url } : { baseUrls: [a.url] });
      const lock = acquired(await c.lock([{ descriptor: `o-${form}`, mode: "exclusive" }]));
      await c.refresh([lock.token]);
      await c.freshTimestamp();
      await c.unlock([lock.token]);
      await c.startTransaction();
      await Promise.all(Array.from({ length: 10 }, (_, i) => c.lock([{ descriptor: `many-${form}-${i}`, mode: "exclusive" }])));
      expect(a.count("cluster")).toBe(0);
    }
  });
});

describe("options", () => {
  const bad: [string, Partial<HttpLockClientOptions>, string][] = [
    ["both forms", { baseUrl: "http://127.0.0.1:1", baseUrls: ["http://127.0.0.1:2"] }, "baseUrls"],
    ["neither", {}, "baseUrl"],
    ["an empty list", { baseUrls: [] }, "baseUrls"],
    ["not a list", { baseUrls: "http://127.0.0.1:1" as unknown as string[] }, "baseUrls"],
    ["not a URL", { baseUrls: ["http://127.0.0.1:1", "nope"] }, "baseUrls[1]"],
    ["not http", { baseUrls: ["ftp://127.0.0.1:1"] }, "baseUrls[0]"],
    ["a repeat", { baseUrls: ["http://127.0.0.1:1", "http://127.0.0.1:1/"] }, "baseUrls[1]"],
    ["a bad baseUrl", { baseUrl: "::" }, "baseUrl"],
  ];
  for (const [what, options, path] of bad) {
    it(`refuses ${what} with INVALID_ARGUMENT at ${path}`, () => {
      let err: unknown;
      try {
        LockClient.http({ namespace: NS, ...options } as HttpLockClientOptions);
      } catch (e) {
        err = e;
      }
      expect(isLeaseholdError(err, "INVALID_ARGUMENT")).toBe(true);
      expect((err as { details: { path: string } }).details.path).toBe(path);
      expect((err as Error).message).toContain(path.replace(/\[\d+\]$/, ""));
    });
  }
});
