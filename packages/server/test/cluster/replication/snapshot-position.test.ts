import type { LockResponse } from "@leasehold/protocol";
import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import type { Coordinator } from "../../../src/cluster/coordinator.js";
import { ReplicaStore } from "../../../src/cluster/replication/replica-store.js";
import { ShardReplicaSink, snapshotShard } from "../../../src/cluster/replication/replicated-tables.js";
import type { ReplicationMessage } from "../../../src/cluster/replication/replication-wire.js";
import { ShardReplication } from "../../../src/cluster/replication/shard-replication.js";
import { TermReplicator } from "../../../src/cluster/replication/term-replicator.js";
import { InMemoryLockService } from "../../../src/service/in-memory-lock-service.js";
import { FakeReplicationClock, settle } from "./fake-replication-clock.js";

const logger = pino({ level: "silent" });
const LEASE_MS = 10_000;
type Acquired = Extract<LockResponse, { status: "acquired" }>;

/**
 * A leader's engine table on a fake clock, replicated in process (a JSON round trip) to a replica
 * engine table on the same clock. No timer of either table fires by itself (the clock moves only
 * when the test moves it, and their real timers are far off), so a lease can lapse exactly at the
 * moment a standby is attached and the snapshot's export is the first to see it.
 */
function setup(options: { unsafeSnapshotAfterPosition?: boolean } = {}) {
  let now = 1_000;
  /** While set, every read of the clock moves it on by 1 ms: time passing during a long export. */
  let ticking = false;
  const clock = (): number => (ticking ? now++ : now);
  const leader = new InMemoryLockService({ leaderId: "L1", leaseMs: LEASE_MS, clock, logger });
  const replicas: InMemoryLockService[] = [];
  const refusals: string[] = [];
  const store = new ReplicaStore({
    incarnation: "s-inc",
    shards: () => 4,
    rowEpoch: () => null,
    createSink: (stream) => {
      const table = new InMemoryLockService({ replica: true, leaderId: stream.leaderId, leaseMs: LEASE_MS, clock, logger });
      replicas.push(table);
      return new ShardReplicaSink(table);
    },
  });
  const lost: string[] = [];
  const replicationClock = new FakeReplicationClock();
  const coordinator = { nameStandby: () => Promise.resolve(true), setInSync: () => Promise.resolve(true) } as unknown as Coordinator;
  const replication = new ShardReplication({
    term: { shard: 0, epoch: 1, serverId: "a", incarnation: "a-inc" },
    leaderId: "L1",
    coordinator,
    connect: () => ({
      send: async (m) => {
        await Promise.resolve();
        try {
          return store.receive(JSON.parse(JSON.stringify(m)) as ReplicationMessage);
        } catch (err) {
          refusals.push(`${(err as { code?: string }).code}: ${(err as Error).message}`);
          throw err;
        }
      },
      close: () => Promise.resolve(),
    }),
    snapshot: () => {
      ticking = true;
      try {
        return snapshotShard(leader);
      } finally {
        ticking = false;
      }
    },
    clock: replicationClock,
    lateMs: 1_000,
    logger,
    onFenced: () => undefined,
    onStandbyLost: (reason) => lost.push(reason),
    unsafeSnapshotAfterPosition: options.unsafeSnapshotAfterPosition,
  });
  const replicator = new TermReplicator(leader, replication, { needsAck: (e) => (e as { type?: string }).type === "grant" });
  replicator.start();
  /** Let the stream carry everything appended so far (group commit, lazy releases, acknowledgements). */
  const flush = async (): Promise<void> => {
    for (let i = 0; i < 5; i++) {
      await replicationClock.endTurn();
      await replicationClock.advance(2);
      await settle();
    }
  };
  const attach = async (): Promise<void> => {
    expect(await replication.attach({ serverId: "s", incarnation: "s-inc", url: "http://s.invalid" })).toBe(true);
    await flush();
  };
  /** Token ids of every namespace, leader and replica, as each table holds them now. */
  const tokens = (table: InMemoryLockService): Record<string, string[]> =>
    Object.fromEntries(table.namespaceNames().map((ns) => [ns, table.exportNamespace(ns).tokens.map((t) => t.token).sort()]));
  return {
    leader,
    replication,
    replica: () => replicas.at(-1),
    refusals,
    lost,
    attach,
    flush,
    tokens,
    at: (ms: number) => (now = ms),
    get now() {
      return now;
    },
    close: async () => {
      replication.close(new Error("test over"));
      await leader.close();
      for (const r of replicas) await r.close();
    },
  };
}

const lockX = (s: ReturnType<typeof setup>, ns: string, descriptor: string, acquireTimeoutMs?: number) =>
  s.leader.beginLock(ns, { locks: [{ descriptor, mode: "exclusive" }], ...(acquireTimeoutMs === undefined ? {} : { acquireTimeoutMs }) });

describe("a standby's snapshot and its log position are one step (snapshot-after-position)", () => {
  let s: ReturnType<typeof setup> | null = null;
  afterEach(async () => {
    await s?.close();
    s = null;
  });

  it("a lease that lapses exactly at the export, and a waiter it hands the lock to: the standby takes the snapshot and the entries after it without refusing any, and holds what the leader holds", async () => {
    s = setup();
    const held = (await s.leader.lock("ns", { locks: [{ descriptor: "x", mode: "exclusive" }] })) as Acquired;
    expect(held.status).toBe("acquired");
    // A waiter for x, with a deadline far off: x's lapse grants x to it.
    const waiter = lockX(s, "ns", "x", 60_000);
    expect("answer" in waiter).toBe(true);
    // x's lease lapses now; no timer of the leader saw it: the export is the first call to look.
    s.at(s.now + LEASE_MS + 1);
    await s.attach();
    expect(s.refusals).toEqual([]);
    expect(s.lost).toEqual([]);
    expect(s.replication.rule.state).toBe("in-sync");
    expect(s.tokens(s.replica()!)).toEqual(s.tokens(s.leader));
    expect(s.tokens(s.leader).ns).not.toContain(held.token);
  });

  it("a waiter whose deadline comes exactly at the export: its end is in the snapshot and not sent again after it", async () => {
    s = setup();
    await s.leader.lock("ns", { locks: [{ descriptor: "y", mode: "exclusive" }] });
    lockX(s, "ns", "y", 500);
    s.at(s.now + 500);
    await s.attach();
    expect(s.refusals).toEqual([]);
    expect(s.replication.rule.state).toBe("in-sync");
    expect(s.replica()!.exportNamespace("ns").waiters).toEqual([]);
  });

  it("time passing while several namespaces are exported: a lease of an already exported namespace lapsing during the export of the next is not in the image and not after the position either", async () => {
    s = setup();
    // Namespace a first (exported first), then b; a's lease lapses 1 ms after the export begins.
    const a = (await s.leader.lock("a", { locks: [{ descriptor: "x", mode: "exclusive" }] })) as Acquired;
    s.at(s.now + 1);
    await s.leader.lock("b", { locks: [{ descriptor: "x", mode: "exclusive" }] });
    s.at(s.now + LEASE_MS - 2);
    await s.attach();
    expect(s.refusals).toEqual([]);
    expect(s.lost).toEqual([]);
    expect(s.replication.rule.state).toBe("in-sync");
    // Every later entry fits too (b's lapse, reaped by the next call if not by the export), and the replica agrees with the leader.
    s.at(s.now + 5);
    await s.leader.lock("a", { locks: [{ descriptor: "z", mode: "exclusive" }] });
    const want = s.tokens(s.leader);
    await s.flush();
    expect(s.refusals).toEqual([]);
    expect(s.tokens(s.replica()!)).toEqual(want);
    expect(want.a).not.toContain(a.token);
    expect(want.a).toHaveLength(1);
  });

  it("negative control (LEASEHOLD_TEST_BREAK=snapshot-after-position): with the position taken before the export, the standby refuses the lapse's release and is recorded not in sync", async () => {
    s = setup({ unsafeSnapshotAfterPosition: true });
    await s.leader.lock("ns", { locks: [{ descriptor: "x", mode: "exclusive" }] });
    s.at(s.now + LEASE_MS + 1);
    await s.attach();
    expect(s.refusals.join("\n")).toMatch(/^REPLICA_DIVERGED: /);
    expect(s.lost).toEqual(["not in sync"]);
  });
});
