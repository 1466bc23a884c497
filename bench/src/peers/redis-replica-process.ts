import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { findOnPath, freePort, stopChild } from "./local-process.js";
import { RespConnection } from "./resp-connection.js";

/** One `redis-server` the benchmark started. */
export interface RedisServer {
  readonly port: number;
  /** Its process id, for its CPU time from /proc. */
  readonly pid: number;
}

/** A Redis primary and its replica, in sync, started by {@link startRedisReplicaPair}. */
export interface RedisReplicaPair {
  readonly primary: RedisServer;
  readonly replica: RedisServer;
  /** `redis_version` as the primary reports it. */
  readonly version: string;
  /** Stop both servers and delete their directories. */
  stop(): Promise<void>;
}

/** `redis-server` on PATH (Debian's `redis-server` package), or undefined: the peer is then skipped and the run says so. */
export function findRedisServer(): string | undefined {
  return findOnPath("redis-server");
}

/** `field:value` lines of an INFO section, as a map. */
export function infoFields(info: string): Map<string, string> {
  const fields = new Map<string, string>();
  for (const line of info.split("\r\n")) {
    const colon = line.indexOf(":");
    if (colon > 0 && !line.startsWith("#")) fields.set(line.slice(0, colon), line.slice(colon + 1));
  }
  return fields;
}

/** One server: in memory only (`--save ''`, `--appendonly no`), loopback, its own temp dir as `--dir`. */
function spawnRedis(binary: string, port: number, dir: string, extra: readonly string[]): { child: ChildProcess; output: () => string } {
  const args = ["--port", String(port), "--bind", "127.0.0.1", "--dir", dir, "--save", "", "--appendonly", "no", "--daemonize", "no", "--loglevel", "warning", ...extra];
  const child = spawn(binary, args, { stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  const keep = (chunk: Buffer): void => void (output = (output + chunk.toString("utf8")).slice(-2_000));
  child.stdout!.on("data", keep);
  child.stderr!.on("data", keep);
  return { child, output: () => output.trim() };
}

/** Resolve after `ms`. */
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * Start a Redis primary and a replica of it (`--replicaof`) from `binary` on free loopback ports,
 * each in a fresh directory under the system temp dir, with persistence off on both: the promise
 * measured is a lock kept in a second process's memory, as leasehold's standby keeps it, not on
 * disk. `--repl-diskless-sync-delay 0` so the replica's first sync starts at once (Redis 7 waits
 * 5 s for more replicas by default). Resolves once the primary lists the replica as `online` and
 * the replica says `master_link_status:up`, within `timeoutMs` (default 15 s: a loaded machine
 * takes seconds to start two processes). A start that fails stops what it started and deletes the
 * directories before it throws.
 */
export async function startRedisReplicaPair(binary: string, timeoutMs = 15_000): Promise<RedisReplicaPair> {
  const dirs = [mkdtempSync(join(tmpdir(), "leasehold-bench-redis-primary-")), mkdtempSync(join(tmpdir(), "leasehold-bench-redis-replica-"))] as const;
  const [primaryPort, replicaPort] = [await freePort(), await freePort()];
  const started: ChildProcess[] = [];
  const stop = async (): Promise<void> => {
    await Promise.all(started.map((c) => stopChild(c)));
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  };
  const connections: RespConnection[] = [];
  try {
    const primary = spawnRedis(binary, primaryPort, dirs[0], ["--repl-diskless-sync-delay", "0"]);
    started.push(primary.child);
    const replica = spawnRedis(binary, replicaPort, dirs[1], ["--replicaof", "127.0.0.1", String(primaryPort)]);
    started.push(replica.child);
    const deadline = performance.now() + timeoutMs;
    const open = async (port: number, server: { child: ChildProcess; output: () => string }): Promise<RespConnection> => {
      for (;;) {
        if (server.child.exitCode !== null) throw new Error(`redis-server on port ${port} exited with ${server.child.exitCode}: ${server.output()}`);
        try {
          const conn = await RespConnection.open(port);
          connections.push(conn);
          return conn;
        } catch (err) {
          if (performance.now() > deadline) throw new Error(`redis-server on port ${port} did not accept a connection within ${timeoutMs} ms: ${(err as Error).message}; ${server.output()}`);
          await sleep(50);
        }
      }
    };
    const [toPrimary, toReplica] = [await open(primaryPort, primary), await open(replicaPort, replica)];
    for (;;) {
      const ours = infoFields(String(await toPrimary.call("INFO", "replication")));
      const theirs = infoFields(String(await toReplica.call("INFO", "replication")));
      if (ours.get("connected_slaves") === "1" && (ours.get("slave0") ?? "").includes("state=online") && theirs.get("master_link_status") === "up") break;
      if (performance.now() > deadline) throw new Error(`the Redis replica was not in sync within ${timeoutMs} ms: primary ${JSON.stringify(Object.fromEntries(ours))}, replica ${JSON.stringify(Object.fromEntries(theirs))}`);
      await sleep(50);
    }
    const version = infoFields(String(await toPrimary.call("INFO", "server"))).get("redis_version") ?? "unknown";
    return { primary: { port: primaryPort, pid: primary.child.pid! }, replica: { port: replicaPort, pid: replica.child.pid! }, version, stop };
  } catch (err) {
    await stop();
    throw err;
  } finally {
    for (const conn of connections) conn.close();
  }
}
