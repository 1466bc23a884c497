import { createServer, type Socket } from "node:net";
import type { AddressInfo } from "node:net";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startServer } from "../../src/start-server.js";
import { runCli, startCli, type CliProcess } from "../support/cli-process.js";
import { rawRequest } from "../support/raw-request.js";
import { sleep } from "../support/wait-for.js";
import { clusterOf, op } from "./cluster-support.js";
import { PG_URL, createTestSchema, type TestSchema } from "./pg-schema.js";
import { freePort, startTcpProxy, type TcpProxy } from "./tcp-proxy.js";

const LEADER_LEASE_MS = 600;

/** Ask for a timestamp of `namespace` every 50 ms until one is served (the server joined) or 15 s passed; the last answer. */
async function timestampOnceJoined(url: string, namespace: string): Promise<Awaited<ReturnType<typeof op>>> {
  const deadline = Date.now() + 15_000;
  let served = await op(url, namespace, "timestamps", { count: 1 });
  while (served.status !== 200 && Date.now() < deadline) {
    await sleep(50);
    served = await op(url, namespace, "timestamps", { count: 1 });
  }
  return served;
}

describe("cluster: PostgreSQL unreachable at start", () => {
  let schema: TestSchema;
  const children: CliProcess[] = [];
  const proxies: TcpProxy[] = [];

  beforeEach(async () => {
    schema = await createTestSchema();
  });
  afterEach(async () => {
    for (const c of children.splice(0)) {
      c.child.kill("SIGKILL");
      await c.exited;
    }
    await Promise.all(proxies.splice(0).map((p) => p.close()));
    await schema.drop();
  });

  const via = (port: number): string => schema.connectionString.replace("127.0.0.1:5432", `127.0.0.1:${port}`);
  const start = async (args: string[]): Promise<CliProcess> => {
    const child = await startCli(args);
    children.push(child);
    return child;
  };

  it("listens, answers 503 with retry-after saying why, retries without flooding the log, then joins and serves when the database comes", async () => {
    const port = await freePort();
    const server = await start(["--port", "0", "--cluster", via(port), "--leader-lease-ms", String(LEADER_LEASE_MS), "--shards", "2"]);
    const down = await op(server.url, "early", "timestamps", { count: 1 });
    expect(down.status).toBe(503);
    expect(Number(down.headers["retry-after"])).toBeGreaterThanOrEqual(1);
    expect((down.json as { error: { code: string; message: string } }).error).toMatchObject({ code: "UNAVAILABLE", message: expect.stringMatching(/not joined the cluster yet.*PostgreSQL.*ECONNREFUSED/) });
    const lock = await op(server.url, "early", "lock", { locks: [{ descriptor: "d", mode: "exclusive" }] });
    expect(lock.status).toBe(503);
    const map = await rawRequest(server.url, "/v1/cluster", { method: "GET" });
    expect(map.status).toBe(503);
    expect(map.text).toMatch(/cannot reach the cluster's PostgreSQL/);
    const health = await rawRequest(server.url, "/v1/health", { method: "GET" });
    expect(health.status).toBe(200);
    expect(health.json).toMatchObject({ status: "ok", cluster: { shardsLed: 0 } });
    expect((await rawRequest(server.url, "/metrics", { method: "GET" })).text).toMatch(/leasehold_cluster_coordinator_reachable 0/);

    // Retries back off (250 ms doubling up to the leader lease): a handful of warnings, not a flood.
    await sleep(2_000);
    const warnings = server.lines.filter((l) => typeof l.msg === "string" && l.msg.startsWith("could not reach the cluster's PostgreSQL")).length;
    expect(warnings).toBeGreaterThanOrEqual(2);
    expect(warnings).toBeLessThanOrEqual(8);
    expect(server.child.exitCode).toBeNull();

    proxies.push(await startTcpProxy(5432, port));
    expect((await timestampOnceJoined(server.url, "early")).status).toBe(200);
    expect(server.lines.some((l) => l.msg === "joined the cluster" && l.shards === 2)).toBe(true);
    // Both shards are taken in one pass, but "early"'s may be served before the other's acquisition
    // answers (each lane of acquisitions opens its own pooled connection): read the map until both are led.
    let joined = await clusterOf(server.url);
    for (const until = Date.now() + 5_000; !joined.leaders.every((l) => l.leaderUrl === server.url) && Date.now() < until; ) {
      await sleep(20);
      joined = await clusterOf(server.url);
    }
    expect(joined.leaders.every((l) => l.leaderUrl === server.url)).toBe(true);
    expect((await rawRequest(server.url, "/metrics", { method: "GET" })).text).toMatch(/leasehold_cluster_coordinator_reachable 1/);
    server.child.kill("SIGTERM");
    expect((await server.exited).code).toBe(0);
  }, 40_000);

  it("a --shards that differs from the cluster's, found once the database comes, still ends the server with exit 1 and the message", async () => {
    // Create the cluster with 8 shards, then point a server with --shards 16 at a closed port.
    const first = await start(["--port", "0", "--cluster", schema.connectionString, "--shards", "8", "--leader-lease-ms", String(LEADER_LEASE_MS)]);
    first.child.kill("SIGTERM");
    expect((await first.exited).code).toBe(0);
    const port = await freePort();
    const server = await start(["--port", "0", "--cluster", via(port), "--shards", "16", "--leader-lease-ms", String(LEADER_LEASE_MS)]);
    expect((await op(server.url, "x", "timestamps", {})).status).toBe(503);
    proxies.push(await startTcpProxy(5432, port));
    // Once in three full runs (session 19, a loaded machine) the server had not exited 40 s later;
    // not reproduced since: should it stall again, say where, with the server's last log lines.
    let timer: NodeJS.Timeout | undefined;
    const stalled = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`the server did not exit within 25 s of the database coming; its last log lines:\n${server.lines.slice(-15).map((l) => JSON.stringify(l)).join("\n")}`)), 25_000);
    });
    const exited = await Promise.race([server.exited, stalled]).finally(() => clearTimeout(timer));
    expect(exited.code).toBe(1);
    expect(server.lines.some((l) => l.level === 60 && JSON.stringify(l).includes("--shards 16 does not match this cluster, which was created with 8 shards"))).toBe(true);
  }, 40_000);

  it("errors that waiting cannot fix end the start with exit 1 and a clear message: no such database, unknown role, malformed string", async () => {
    const base = new URL(PG_URL);
    const noDb = await runCli(["--port", "0", "--cluster", `postgres://${base.username}@${base.host}/lh_no_such_database_${schema.name}`]);
    expect(noDb.code).toBe(1);
    expect(noDb.stdout).toContain('"msg":"could not start"');
    expect(noDb.stdout).toMatch(/database \\"lh_no_such_database_.*\\" does not exist/);
    const noRole = await runCli(["--port", "0", "--cluster", `postgres://lh_no_such_role@${base.host}${base.pathname}`]);
    expect(noRole.code).toBe(1);
    expect(noRole.stdout).toContain('"msg":"could not start"');
    expect(noRole.stdout).toMatch(/role \\"lh_no_such_role\\" does not exist/);
    const malformed = await runCli(["--port", "0", "--cluster", "host=127.0.0.1 dbname=test"]);
    expect(malformed.code).toBe(1);
    expect(malformed.stdout).toContain('"msg":"could not start"');
    expect(malformed.stdout).toMatch(/must be a PostgreSQL URL/);
    const badPort = await runCli(["--port", "0", "--cluster", `postgres://${base.username}@127.0.0.1:notaport/test`]);
    expect(badPort.code).toBe(1);
    expect(badPort.stdout).toContain('"msg":"could not start"');
    expect(badPort.stdout).toMatch(/connection string is malformed/);
    expect(badPort.stdout).not.toContain("notaport");
  }, 40_000);

  it("a join whose first statement hangs (a table locked by another session): the server starts after its first wait, answers 503, and joins when the statement goes through", async () => {
    // The tables exist; another session holds cluster_config locked, so the join's insert waits.
    const setup = await startServer({ cluster: { connectionString: schema.connectionString, leaderLeaseMs: LEADER_LEASE_MS, shards: 2 } });
    await setup.close();
    await schema.query("BEGIN");
    await schema.query("LOCK TABLE cluster_config IN ACCESS EXCLUSIVE MODE");
    let locked = true;
    try {
      const begun = performance.now();
      const server = await startServer({ cluster: { connectionString: schema.connectionString, leaderLeaseMs: LEADER_LEASE_MS, shards: 2 } });
      try {
        // Answered after the first wait, max(2 s, leader lease), not when the statement ends.
        expect(performance.now() - begun).toBeGreaterThanOrEqual(1_900);
        const waiting = await op(server.url, "hung", "timestamps", { count: 1 });
        expect(waiting.status).toBe(503);
        expect((waiting.json as { error: { message: string } }).error.message).toMatch(/not joined the cluster yet: it is still connecting/);
        await schema.query("COMMIT");
        locked = false;
        expect((await timestampOnceJoined(server.url, "hung")).status).toBe(200);
      } finally {
        await server.close();
      }
      // And a server closed while its join statement still hangs does not wait for it.
      await schema.query("BEGIN");
      await schema.query("LOCK TABLE cluster_config IN ACCESS EXCLUSIVE MODE");
      locked = true;
      const stuck = await startServer({ cluster: { connectionString: schema.connectionString, leaderLeaseMs: LEADER_LEASE_MS, shards: 2 } });
      const closing = performance.now();
      await stuck.close();
      // The statement would wait up to its 30 s timeout; close() ends its connection instead.
      expect(performance.now() - closing).toBeLessThan(10_000);
    } finally {
      if (locked) await schema.query("ROLLBACK");
    }
  }, 60_000);

  it("a database that accepts connections but never answers: the server still starts, answers 503, and closes without waiting for it", async () => {
    const sockets = new Set<Socket>();
    const blackhole = createServer((socket) => {
      sockets.add(socket);
      socket.on("error", () => undefined);
    });
    await new Promise<void>((resolve) => blackhole.listen(0, "127.0.0.1", resolve));
    try {
      const port = (blackhole.address() as AddressInfo).port;
      const server = await startServer({ cluster: { connectionString: via(port), leaderLeaseMs: LEADER_LEASE_MS, shards: 2 } });
      try {
        const answer = await op(server.url, "slow", "timestamps", { count: 1 });
        expect(answer.status).toBe(503);
        expect(Number(answer.headers["retry-after"])).toBeGreaterThanOrEqual(1);
        expect((answer.json as { error: { message: string } }).error.message).toMatch(/not joined the cluster yet/);
        expect(sockets.size).toBeGreaterThanOrEqual(1);
      } finally {
        await server.close();
      }
    } finally {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => blackhole.close(() => resolve()));
    }
  }, 40_000);
});
