import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type RunningServer } from "../../src/start-server.js";
import { HttpLockService } from "../support/http-lock-service.js";
import { rawRequest } from "../support/raw-request.js";

/** `name{labels} value` lines of a scrape, by series. */
function samples(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*(?:\{[^}]*\})?) (\S+)$/.exec(line);
    if (!match) throw new Error(`not a Prometheus sample line: ${line}`);
    out.set(match[1]!, match[2] === "+Inf" ? Infinity : Number(match[2]));
  }
  return out;
}

describe("HTTP: GET /metrics and GET /v1/health", () => {
  let server: RunningServer;
  let client: HttpLockService;
  beforeAll(async () => {
    server = await startServer();
    client = new HttpLockService(server.url);
  });
  afterAll(async () => {
    await server.close();
  });

  it("health answers ok with this process's leaderId; HEAD works too", async () => {
    const res = await rawRequest(server.url, "/v1/health", { method: "GET" });
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ status: "ok", leaderId: server.service.leaderId, version: expect.any(String) as string, serverId: server.service.leaderId });
    // A single server is a cluster of one that leads everything (PROTOCOL.md "Cluster mode").
    const cluster = await rawRequest(server.url, "/v1/cluster", { method: "GET" });
    expect(cluster.status).toBe(200);
    expect(cluster.json).toEqual({ serverId: server.service.leaderId, shards: 1, leaders: [{ shard: 0, leaderUrl: server.url, leaderId: server.service.leaderId, epoch: 1, standby: null }] });
    const head = await rawRequest(server.url, "/v1/health", { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(head.text).toBe("");
    // A single server keeps no standby: never protected, so a deploy gate on it never passes.
    const gated = await rawRequest(server.url, "/v1/health?protected", { method: "GET" });
    expect(gated.status).toBe(503);
    expect(gated.json).toMatchObject({ error: { code: "UNAVAILABLE", message: expect.stringContaining("not protected: a single server keeps no standby") as string } });
  });

  it("exposes gauges, counters and a latency histogram per operation, in Prometheus text format", async () => {
    const ns = "metrics";
    const held = await client.lock(ns, { locks: [{ descriptor: "m1", mode: "exclusive" }, { descriptor: "m2", mode: "shared" }] });
    const waiter = client.lock(ns, { locks: [{ descriptor: "m1", mode: "exclusive" }], acquireTimeoutMs: 10_000 });
    while (server.service.snapshot(ns).waitingRequests === 0) await new Promise((r) => setTimeout(r, 5));
    await client.lock(ns, { locks: [{ descriptor: "m1", mode: "exclusive" }] });
    const txn = await client.startTransactions(ns, { count: 2 });
    await client.timestamps(ns, { count: 3 });
    await rawRequest(server.url, `/v1/namespaces/${ns}/lock`, { body: "{", headers: { "content-type": "application/json" } });

    const res = await rawRequest(server.url, "/metrics", { method: "GET" });
    expect(res.status).toBe(200);
    expect(res.headers["content-type"]).toMatch(/^text\/plain; version=0\.0\.4/);
    const s = samples(res.text);
    expect(s.get("leasehold_held_locks")).toBe(2);
    expect(s.get("leasehold_held_tokens")).toBe(3);
    expect(s.get("leasehold_waiting_requests")).toBe(1);
    expect(s.get("leasehold_namespaces")).toBeGreaterThanOrEqual(1);
    expect(s.get("leasehold_grants_total")).toBeGreaterThanOrEqual(2);
    expect(s.get("leasehold_timeouts_total")).toBeGreaterThanOrEqual(1);
    for (const name of ["leasehold_lease_lapses_total", "leasehold_unlocks_total", "leasehold_abandoned_total"]) expect(s.has(name)).toBe(true);
    expect(s.get('leasehold_requests_total{operation="lock",status="200"}')).toBe(2);
    expect(s.get('leasehold_requests_total{operation="lock",status="400"}')).toBe(1);
    expect(s.get('leasehold_requests_total{operation="transactions/start",status="200"}')).toBe(1);
    expect(s.get('leasehold_request_duration_seconds_count{operation="timestamps"}')).toBe(1);
    expect(s.get('leasehold_request_duration_seconds_bucket{operation="lock",le="+Inf"}')).toBe(3);
    expect(s.get('leasehold_request_duration_seconds_bucket{operation="lock",le="60"}')).toBe(3);
    for (const type of ["gauge", "counter", "histogram"]) expect(res.text).toContain(` ${type}\n`);
    expect(res.text).toMatch(/# TYPE leasehold_request_duration_seconds histogram/);

    // Buckets are cumulative.
    const buckets = [...s.entries()].filter(([k]) => k.startsWith('leasehold_request_duration_seconds_bucket{operation="lock"'));
    buckets.reduce((previous, [, count]) => (expect(count).toBeGreaterThanOrEqual(previous), count), 0);

    // No token ever appears in the scrape.
    const tokens = [(held as { token: string }).token, ...txn.transactions.map((t) => t.token)];
    for (const token of tokens) expect(res.text).not.toContain(token);
    await client.unlock(ns, { tokens: [(held as { token: string }).token] });
    await waiter;
  });
});
