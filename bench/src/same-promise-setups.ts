import { LockClient } from "@leasehold/client";
import { inSync, stable, startCluster, type BenchCluster } from "./bench-cluster.js";
import { openEtcdPeer } from "./peers/etcd-peer.js";
import { findEtcd, startEtcd } from "./peers/etcd-process.js";
import type { PeerSession } from "./peers/peer.js";
import { findRedisServer, startRedisReplicaPair } from "./peers/redis-replica-process.js";
import { loadUnlockScript, redisReplicaSession } from "./peers/redis-replica-peer.js";
import { startEchoServer } from "./echo-server-process.js";
import { startServerProcess } from "./server-process.js";
import { silentLogger } from "./silent-logger.js";
import { nowNs } from "./stats.js";

/** The setups measured side by side, in report order. */
export const SAME_PROMISE_SETUPS = ["single", "cluster_r0", "cluster_echo", "cluster_auth", "cluster_decode", "cluster_r1", "redis_replica", "etcd"] as const;
/** One setup's name as it appears in figure names. */
export type SetupName = (typeof SAME_PROMISE_SETUPS)[number];
/** The server processes of each setup whose CPU is reported, by role, as in figure names. */
export const SETUP_ROLES: Readonly<Record<SetupName, readonly string[]>> = {
  single: ["server"],
  cluster_r0: ["leader"],
  cluster_echo: ["leader", "echo"],
  cluster_auth: ["leader", "standby"],
  cluster_decode: ["leader", "standby"],
  cluster_r1: ["leader", "standby"],
  redis_replica: ["primary", "replica"],
  etcd: ["member"],
};

/** How a pair releases: handed off (`tryUnlock`, or a Redis unlock not awaited) or awaited. */
export type Release = "try" | "await";

/** One running setup. */
export interface Setup {
  readonly name: SetupName;
  /** Process id of each of {@link SETUP_ROLES}' roles, in that order. */
  readonly pids: readonly number[];
  /** What it is, for the progress lines (versions, ports). */
  readonly label: string;
  /** A round's callers; `round` names it (a namespace or key prefix of its own). */
  session(release: Release, round: string): Promise<PeerSession>;
}

/** The setups that started, the ones skipped with why, and how to stop them all. */
export interface SetupsStarted {
  readonly setups: Setup[];
  readonly skips: { readonly name: SetupName; readonly reason: string }[];
  stop(): Promise<void>;
}

/** lock then `tryUnlock` or awaited `unlock` on one `LockClient` shared by the round's callers (`target`: one server, or a cluster's members). */
export function leaseholdSession(target: string | readonly string[], release: Release, namespace: string): PeerSession {
  const where = typeof target === "string" ? { baseUrl: target } : { baseUrls: [...target] };
  const client = LockClient.http({ ...where, namespace, logger: silentLogger() });
  return {
    async pair(key) {
      const res = await client.lock([{ descriptor: `k${key}`, mode: "exclusive" }], { acquireTimeoutMs: 30_000 });
      const at = nowNs();
      if (res.status !== "acquired") throw new Error(`leasehold: lock k${key} not granted within 30 s`);
      if (release === "try") client.tryUnlock([res.token]);
      else await client.unlock([res.token]);
      return at;
    },
    async end() {
      await client.close();
      const failures = client.stats().unlockFailures;
      if (failures > 0) throw new Error(`leasehold: ${failures} unlock calls failed`);
    },
  };
}

const message = (err: unknown): string => (err instanceof Error ? err.message : String(err)).slice(0, 400);

/**
 * Start every setup that makes (or, for the single server, is measured against) the promise of a
 * lock kept through a server's crash: a single server; 3-server clusters over PostgreSQL with
 * `--shards 1` (one leader), `--replicas 0` and `--replicas 1` (settled, the latter in sync); the
 * echo floor (the same `--replicas 1` cluster whose leader's replication connection goes to a TCP
 * echo server, `LEASEHOLD_TEST_ECHO_STANDBY_PORT`: what waiting for another process at all costs,
 * the yardstick issue 32 measures the real standby against, in the same run); the same cluster
 * twice more with its real standby in a floor mode (`LEASEHOLD_TEST_STANDBY_FLOOR`: `auth` checks
 * each frame's MAC and signs each answer and applies nothing, `decode` also decodes each message:
 * what authenticating, and reading, every message cost before anything is applied); a Redis
 * primary with a replica from `redis-server` on PATH; a one-member etcd when its binary is on PATH.
 * All leasehold setups use `--lease-ms 2000`, as the cluster suite's other cost figures do. A setup
 * that cannot start is skipped with its reason (a leasehold one fails the whole start: it is what
 * the others are measured against); `stop` stops whatever started, also after a failure.
 */
export async function startSameSetups(progress: (m: string) => void): Promise<SetupsStarted> {
  const setups: Setup[] = [];
  const skips: SetupsStarted["skips"] = [];
  const stops: (() => Promise<void>)[] = [];
  const stop = async (): Promise<void> => void (await Promise.allSettled(stops.map((s) => s())));
  try {
    const single = await startServerProcess({ leaseMs: 2_000 });
    stops.push(() => single.stop());
    setups.push({ name: "single", pids: [single.child.pid!], label: `single server ${single.url}`, session: async (release, round) => leaseholdSession(single.url, release, round) });
    const echoServer = await startEchoServer();
    stops.push(() => echoServer.stop());
    const clusters: BenchCluster[] = [];
    for (const replicas of [0, 1]) {
      const cluster = await startCluster(3, ["--shards", "1", "--lease-ms", "2000", "--replicas", String(replicas)]);
      stops.push(() => cluster.close());
      clusters.push(cluster);
    }
    // The test knob is read at any log level (a debug access log would change what is measured).
    const echo = await startCluster(3, ["--shards", "1", "--lease-ms", "2000", "--replicas", "1"], { extraArgs: ["--unsafe-test-knobs"], env: { LEASEHOLD_TEST_ECHO_STANDBY_PORT: String(echoServer.port) } });
    stops.push(() => echo.close());
    clusters.push(echo);
    // The floors of a standby that authenticates every frame (LEASEHOLD_TEST_STANDBY_FLOOR, benchmark only).
    const floors: BenchCluster[] = [];
    for (const floor of ["auth", "decode"]) {
      const cluster = await startCluster(3, ["--shards", "1", "--lease-ms", "2000", "--replicas", "1"], { extraArgs: ["--unsafe-test-knobs"], env: { LEASEHOLD_TEST_STANDBY_FLOOR: floor } });
      stops.push(() => cluster.close());
      clusters.push(cluster);
      floors.push(cluster);
    }
    await Promise.all(clusters.map((c) => stable(c, 3_000, 2_000)));
    const [r0, r1] = clusters as [BenchCluster, BenchCluster];
    const [leaderRow] = await r0.rows();
    const [echoRow] = await inSync(echo, 30_000);
    const urls = (c: BenchCluster): string[] => c.members.map((m) => m.url);
    /** The pids of a cluster's leader and in-sync standby. */
    const pair = async (c: BenchCluster): Promise<number[]> => {
      const [row] = await inSync(c, 30_000);
      return [c.member(row!.holder).child.pid!, c.member(row!.standbyId).child.pid!];
    };
    const [auth, decode] = floors as [BenchCluster, BenchCluster];
    setups.push(
      { name: "cluster_r0", pids: [r0.member(leaderRow!.holder).child.pid!], label: "3-server cluster, --shards 1 --replicas 0", session: async (release, round) => leaseholdSession(urls(r0), release, round) },
      { name: "cluster_echo", pids: [echo.member(echoRow!.holder).child.pid!, echoServer.child.pid!], label: `3-server cluster, --shards 1 --replicas 1, standby an echo server :${echoServer.port} (the floor)`, session: async (release, round) => leaseholdSession(urls(echo), release, round) },
      { name: "cluster_auth", pids: await pair(auth), label: "3-server cluster, --shards 1 --replicas 1, the standby checks each frame's MAC and signs each answer, nothing decoded or applied (auth floor)", session: async (release, round) => leaseholdSession(urls(auth), release, round) },
      { name: "cluster_decode", pids: await pair(decode), label: "3-server cluster, --shards 1 --replicas 1, the standby checks MACs and decodes each message, nothing applied (decode floor)", session: async (release, round) => leaseholdSession(urls(decode), release, round) },
      { name: "cluster_r1", pids: await pair(r1), label: "3-server cluster, --shards 1 --replicas 1, in sync", session: async (release, round) => leaseholdSession(urls(r1), release, round) },
    );
  } catch (err) {
    await stop();
    throw err;
  }
  const optional = async (name: SetupName, binary: string | undefined, missing: string, start: (binary: string) => Promise<Setup>): Promise<void> => {
    if (binary === undefined) return void skips.push({ name, reason: missing });
    try {
      setups.push(await start(binary));
    } catch (err) {
      skips.push({ name, reason: `${binary} did not start: ${message(err)}` });
    }
  };
  await optional("redis_replica", findRedisServer(), "no redis-server on PATH (Debian: apt-get install redis-server)", async (binary) => {
    const pair = await startRedisReplicaPair(binary);
    stops.push(() => pair.stop());
    const sha = await loadUnlockScript(pair.primary.port);
    const label = `Redis ${pair.version} primary :${pair.primary.port} + replica :${pair.replica.port} (${binary}, temp dirs, no persistence)`;
    return { name: "redis_replica", pids: [pair.primary.pid, pair.replica.pid], label, session: async (release, round) => redisReplicaSession(pair.primary.port, sha, release, round) };
  });
  await optional("etcd", findEtcd(), "no etcd binary on PATH (Debian: apt-get install etcd-server)", async (binary) => {
    const etcd = await startEtcd(binary);
    stops.push(() => etcd.stop());
    const peer = openEtcdPeer(etcd.endpoint);
    stops.unshift(() => peer.close());
    return { name: "etcd", pids: [etcd.pid], label: `etcd ${etcd.version}, one member at ${etcd.endpoint} (${binary}, temp data dir)`, session: () => peer.driver.session() };
  });
  for (const s of setups) progress(`${s.name}: ${s.label}`);
  for (const s of skips) progress(`${s.name}: SKIPPED, ${s.reason}`);
  return { setups, skips, stop };
}
