/**
 * `pnpm bench:breakdown [rounds] [ms]`: where one caller's lock+unlock time goes (issue 23, "One
 * caller"). One process times, one caller at a time, a ladder of exchanges that each add one layer
 * to the one before, so the difference of two medians is the cost of that layer:
 *
 * 1. `tcp`: a 200-byte ping-pong with a TCP echo child: the loopback wire, the kernel and two
 *    event loops waking, nothing else.
 * 2. `http_raw`: a `lock` POST to a bare `node:http` child answering a canned grant, from a
 *    minimal raw HTTP/1.1 client: adds node:http's parsing and writing on the server side.
 * 3. `http_undici`: the same through undici's `Agent.dispatch`, as the client sends: adds undici.
 * 4. `client_echo`: `LockClient.lock` + `tryUnlock` against the same canned child: adds the
 *    client library (validation, request ids, the batcher, the refresher) and the unlock call.
 * 5. `server_raw_lock` / `server_raw_unlock`: the raw client's `lock`, then its `unlock`, against
 *    the real lock server: the server's own handler and engine, compared with `http_raw`.
 * 6. `client_server`: `LockClient.lock` + `tryUnlock` against the real server (the peers suite's
 *    leasehold_async c1 pair).
 * 7. `redis_ping` and `redlock`: ioredis's round trip to Redis and redlock's lock+unlock pair.
 *
 * With `BREAKDOWN_BASELINE_CLI=<path to another build's packages/server/dist/cli.js>`, the
 * `server_raw_lock` and `client_server` stages also run against a server of that build
 * (`baseline_raw_lock`, `baseline_client_server`), in the same rounds: a change's effect on the
 * server's cost measured side by side instead of across runs of a shared machine.
 *
 * Rounds interleave the stages so load from elsewhere on the machine hits all of them alike;
 * each figure is the median of every sample of its stage. Prints a Markdown table.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { connect, type Socket } from "node:net";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { HttpLockService, LockClient } from "@leasehold/client";
import { Redis } from "ioredis";
import Redlock from "redlock";
import { Agent, type Dispatcher } from "undici";
import { REDIS } from "../peers/redlock-peer.js";
import { RawHttpConnection } from "../raw-http-connection.js";
import { cpuUsOf, selfCpuUs } from "../process-cpu.js";
import { startServerProcess } from "../server-process.js";
import { silentLogger } from "../silent-logger.js";
import { nowNs, quantile } from "../stats.js";

const rounds = Number(process.argv[2] ?? 5);
const roundMs = Number(process.argv[3] ?? 400);
const echoScript = fileURLToPath(new URL("./echo-server.js", import.meta.url));
const LOCK_BODY = (i: number) => JSON.stringify({ requestId: `bench-${i}`, locks: [{ descriptor: `k${i % 4}`, mode: "exclusive" }], acquireTimeoutMs: 30_000 });

async function startEcho(mode: "tcp" | "http"): Promise<{ port: number; child: ChildProcess }> {
  const child = spawn(process.execPath, [echoScript, mode], { stdio: ["ignore", "pipe", "inherit"] });
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once("line", resolve);
    child.once("exit", (code) => reject(new Error(`echo server exited with ${code}`)));
  });
  return { port: (JSON.parse(line) as { port: number }).port, child };
}

/** A 200-byte ping-pong on one TCP socket. */
async function tcpPinger(port: number): Promise<{ ping(): Promise<void>; close(): void }> {
  const socket: Socket = await new Promise((resolve, reject) => {
    const s = connect({ host: "127.0.0.1", port }, () => resolve(s));
    s.once("error", reject);
  });
  socket.setNoDelay(true);
  const message = Buffer.alloc(200, 120);
  let received = 0;
  let done: (() => void) | null = null;
  socket.on("data", (chunk: Buffer) => {
    received += chunk.length;
    if (received >= message.length && done) {
      received -= message.length;
      const d = done;
      done = null;
      d();
    }
  });
  return {
    ping: () =>
      new Promise<void>((resolve) => {
        done = resolve;
        socket.write(message);
      }),
    close: () => socket.destroy(),
  };
}

/** One POST through `agent.dispatch` with the least handler that collects the body. */
function undiciPost(agent: Dispatcher, origin: string, path: string, body: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    agent.dispatch(
      { origin, path, method: "POST", headers: { "content-type": "application/json" }, body },
      {
        onRequestStart() {},
        onResponseStart() {},
        onResponseData(_c, chunk) {
          chunks.push(chunk);
        },
        onResponseEnd() {
          resolve(Buffer.concat(chunks).toString("utf8"));
        },
        onResponseError(_c, err) {
          reject(err);
        },
      },
    );
  });
}

/** Which child process serves a stage, for its CPU time: the TCP echo, the HTTP echo, the lock server, or Redis (not measured). */
type Peer = "tcp" | "http" | "server" | "baseline" | "redis";
type Stage = { readonly name: string; readonly peer: Peer; readonly run: (i: number) => Promise<number | void> };


const tcpEcho = await startEcho("tcp");
const httpEcho = await startEcho("http");
const server = await startServerProcess({ nodeArgs: (process.env.LEASEHOLD_SERVER_NODE_ARGS ?? "").split(" ").filter((a) => a !== "") });
const echoUrl = `http://127.0.0.1:${httpEcho.port}`;
const tcp = await tcpPinger(tcpEcho.port);
let rawEcho = await RawHttpConnection.open(echoUrl);
let rawServer = await RawHttpConnection.open(server.url);
const baselineCli = process.env.BREAKDOWN_BASELINE_CLI;
const baseline = baselineCli === undefined ? undefined : await startServerProcess({ cli: baselineCli });
let rawBaseline = baseline === undefined ? undefined : await RawHttpConnection.open(baseline.url);
const baselineClient = baseline === undefined ? undefined : LockClient.http({ baseUrl: baseline.url, namespace: "bench-client", logger: silentLogger() });
const agent = new Agent({ keepAliveTimeout: 30_000 });
const echoClient = LockClient.http({ baseUrl: echoUrl, namespace: "bench", logger: silentLogger() });
const echoTransport = new HttpLockService({ baseUrl: echoUrl });
const serverClient = LockClient.http({ baseUrl: server.url, namespace: "bench-client", logger: silentLogger() });
const redis = new Redis({ ...REDIS, lazyConnect: true });
await redis.connect();
const redlock = new Redlock([redis], { retryCount: -1, retryDelay: 10, retryJitter: 5 });
const lockSpec = (i: number) => [{ descriptor: `k${i % 4}`, mode: "exclusive" as const }];
const clientPair = (client: LockClient) => async (i: number) => {
  const res = await client.lock(lockSpec(i), { acquireTimeoutMs: 30_000 });
  if (res.status !== "acquired") throw new Error("not granted");
  client.tryUnlock([res.token]);
};
let unlockUs = 0;
/** The raw client's lock, timed; the unlock that follows is timed on its own (server_raw_unlock). */
async function rawLockUnlock(connection: RawHttpConnection, i: number): Promise<number> {
  const t0 = nowNs();
  const { body } = await connection.post("/v1/namespaces/bench-raw/lock", LOCK_BODY(i));
  const t1 = nowNs();
  const token = (JSON.parse(body) as { token: string }).token;
  const t2 = nowNs();
  await connection.post("/v1/namespaces/bench-raw/unlock", JSON.stringify({ tokens: [token] }));
  unlockUs = (nowNs() - t2) / 1_000;
  return (t1 - t0) / 1_000;
}
const stages: Stage[] = [
  { name: "tcp", peer: "tcp", run: () => tcp.ping() },
  { name: "http_raw", peer: "http", run: (i) => rawEcho.post("/v1/namespaces/bench/lock", LOCK_BODY(i)).then(() => undefined) },
  { name: "http_undici", peer: "http", run: (i) => undiciPost(agent, echoUrl, "/v1/namespaces/bench/lock", LOCK_BODY(i)).then(() => undefined) },
  {
    name: "transport_echo",
    peer: "http",
    run: (i) => echoTransport.lock("bench", { requestId: `t-${i}`, locks: lockSpec(i), acquireTimeoutMs: 30_000 }).then(() => undefined),
  },
  {
    name: "client_echo_lock",
    peer: "http",
    // LockClient.lock alone: the awaited unlock after it is not timed.
    run: async (i) => {
      const t0 = nowNs();
      const res = await echoClient.lock(lockSpec(i), { acquireTimeoutMs: 30_000 });
      const us = (nowNs() - t0) / 1_000;
      if (res.status === "acquired") await echoClient.unlock([res.token]);
      return us;
    },
  },
  { name: "client_echo", peer: "http", run: clientPair(echoClient) },
  { name: "server_raw_lock", peer: "server", run: (i) => rawLockUnlock(rawServer, i) },
  { name: "client_server", peer: "server", run: clientPair(serverClient) },
  ...(baseline === undefined
    ? []
    : [
        { name: "baseline_raw_lock", peer: "baseline" as const, run: (i: number) => rawLockUnlock(rawBaseline!, i) },
        { name: "baseline_client_server", peer: "baseline" as const, run: clientPair(baselineClient!) },
      ]),
  { name: "redis_ping", peer: "redis", run: () => redis.ping().then(() => undefined) },
  {
    name: "redlock",
    peer: "redis",
    run: async (i) => {
      const lock = await redlock.lock(`leasehold-breakdown:k${i % 4}`, 10_000);
      await lock.unlock();
    },
  },
];
// BREAKDOWN_STAGES=a,b runs only those stages (to profile one of them).
const only = process.env.BREAKDOWN_STAGES?.split(",");
if (only !== undefined) stages.splice(0, stages.length, ...stages.filter((s) => only.includes(s.name)));
const samples = new Map<string, number[]>([...stages.map((s) => [s.name, []] as [string, number[]]), ["server_raw_unlock", []]]);
/** Per stage: operations, and CPU µs spent by this process and by the child serving it. */
const cpu = new Map<string, { ops: number; self: number; peer: number }>(stages.map((s) => [s.name, { ops: 0, self: 0, peer: 0 }]));
const pids: Record<Peer, number | undefined> = { tcp: tcpEcho.child.pid, http: httpEcho.child.pid, server: server.child.pid, baseline: baseline?.child.pid, redis: undefined };
try {
  for (let r = -1; r < rounds; r++) {
    // Round -1 warms every stage up and is not counted.
    const order = r < 0 ? stages : [...stages.slice(r % stages.length), ...stages.slice(0, r % stages.length)];
    for (const stage of order) {
      // A bare node:http server closes a connection idle for 5 s (its keep-alive timeout).
      if (rawEcho.closed) rawEcho = await RawHttpConnection.open(echoUrl);
      if (rawServer.closed) rawServer = await RawHttpConnection.open(server.url);
      if (rawBaseline?.closed) rawBaseline = await RawHttpConnection.open(baseline!.url);
      const end = performance.now() + (r < 0 ? 1_000 : roundMs);
      const [self0, peer0] = [selfCpuUs(), cpuUsOf(pids[stage.peer])];
      let i = 0;
      for (; performance.now() < end; i++) {
        const t0 = nowNs();
        const timed = await stage.run(i);
        const us = typeof timed === "number" ? timed : (nowNs() - t0) / 1_000;
        if (r >= 0) {
          samples.get(stage.name)!.push(us);
          if (stage.name === "server_raw_lock") samples.get("server_raw_unlock")!.push(unlockUs);
        }
      }
      if (r >= 0) {
        const c = cpu.get(stage.name)!;
        c.ops += i;
        c.self += selfCpuUs() - self0;
        c.peer += cpuUsOf(pids[stage.peer]) - peer0;
      }
    }
  }
} finally {
  tcp.close();
  rawEcho.close();
  rawServer.close();
  rawBaseline?.close();
  await Promise.allSettled([agent.close(), echoTransport.close(), echoClient.close(), serverClient.close(), redis.quit(), server.stop(), baselineClient?.close(), baseline?.stop()]);
  tcpEcho.child.kill();
  httpEcho.child.kill();
}
console.log("| stage | p50 µs | p90 µs | samples | client CPU µs/op | server-side CPU µs/op |\n| --- | ---: | ---: | ---: | ---: | ---: |");
for (const [name, values] of samples) {
  const c = cpu.get(name);
  const per = (x: number | undefined) => (c === undefined || x === undefined || Number.isNaN(x) ? "" : (x / c.ops).toFixed(1));
  console.log(`| ${name} | ${quantile(values, 0.5).toFixed(1)} | ${quantile(values, 0.9).toFixed(1)} | ${values.length} | ${per(c?.self)} | ${per(c?.peer)} |`);
}
