import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { LockResponse } from "@leasehold/protocol";
import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import type { Coordinator } from "../../../src/cluster/coordinator.js";
import { newClusterKey } from "../../../src/cluster/replication/cluster-key.js";
import { createHttpReplicationTransport } from "../../../src/cluster/replication/http-replication-transport.js";
import { ReplicaStore } from "../../../src/cluster/replication/replica-store.js";
import { ShardReplicaSink, snapshotShard } from "../../../src/cluster/replication/replicated-tables.js";
import { realReplicationClock } from "../../../src/cluster/replication/replication-clock.js";
import { createReplicationRoute } from "../../../src/cluster/replication/replication-route.js";
import { ShardReplication } from "../../../src/cluster/replication/shard-replication.js";
import { TermReplicator } from "../../../src/cluster/replication/term-replicator.js";
import { InMemoryLockService } from "../../../src/service/in-memory-lock-service.js";
import { waitFor } from "../../support/wait-for.js";

const logger = pino({ level: process.env.E2E_LOG ?? "silent" });

describe("replication end to end: an engine table, its change feed, a real socket, a replica table", () => {
  const closers: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close();
  });

  async function standbyServer(key: Buffer) {
    const replicas: InMemoryLockService[] = [];
    const store = new ReplicaStore({
      incarnation: "standby-inc",
      shards: () => 1,
      rowEpoch: () => null,
      createSink: (stream) => {
        const table = new InMemoryLockService({ replica: true, leaderId: stream.leaderId, logger });
        replicas.push(table);
        return new ShardReplicaSink(table);
      },
    });
    const route = createReplicationRoute({ key: () => key, store, logger });
    const server: Server = createServer((req, res) => {
      if (!route(req, res)) res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    closers.push(() => new Promise((r) => server.close(r)));
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, store, replica: () => replicas.at(-1)! };
  }

  it("under concurrent load, the promoted replica holds every lock the leader answered as granted, with the same tokens and leader id", async () => {
    const key = newClusterKey();
    const standby = await standbyServer(key);
    const leader = new InMemoryLockService({ leaderId: "leader-term-1", logger });
    closers.push(() => leader.close());
    // Locks held before the standby joins travel in the snapshot.
    const early = (await leader.lock("ns-a", { locks: [{ descriptor: "early", mode: "exclusive" }] })) as Extract<LockResponse, { status: "acquired" }>;
    const coordinator = { nameStandby: async () => true, setInSync: async () => true } as unknown as Coordinator;
    const replication = new ShardReplication({
      term: { shard: 0, epoch: 1, serverId: "leader", incarnation: "leader-inc" },
      leaderId: leader.leaderId,
      coordinator,
      connect: (target) => createHttpReplicationTransport({ url: target.url, key }),
      snapshot: () => snapshotShard(leader),
      clock: realReplicationClock,
      lateMs: 60_000,
      logger,
      onFenced: () => undefined,
      onStandbyLost: () => undefined,
    });
    closers.push(async () => replication.close(new Error("test over")));
    const replicator = new TermReplicator(leader, replication, { needsAck: (e) => (e as { type?: string }).type === "grant" });
    replicator.start();
    expect(await replication.attach({ serverId: "standby", incarnation: "standby-inc", url: standby.url })).toBe(true);
    await waitFor(() => replication.rule.state === "in-sync", "the standby in sync");

    // 64 concurrent clients, contended descriptors (some wait for others' unlocks), every grant
    // answered only once the standby acknowledged it.
    const held = new Map<string, string>();
    const released = new Set<string>();
    const client = async (c: number): Promise<void> => {
      for (let i = 0; i < 10; i++) {
        const answer = await replicator.hold(() => leader.lock(`ns-${c % 4}`, { locks: [{ descriptor: `d-${(c + i) % 16}`, mode: c % 3 === 0 ? "shared" : "exclusive" }], acquireTimeoutMs: 5_000 }));
        if (answer.status !== "acquired") continue;
        // The rule: the standby holds the grant before its client is told.
        expect(standby.store.get(0)!.appliedSeq).toBeGreaterThanOrEqual(1);
        if (i % 2 === 0) {
          await leader.unlock(`ns-${c % 4}`, { tokens: [answer.token] });
          released.add(answer.token);
        } else held.set(answer.token, `ns-${c % 4}`);
      }
    };
    await Promise.all(Array.from({ length: 64 }, (_, c) => client(c)));
    expect(held.size).toBeGreaterThan(50);
    await waitFor(() => standby.store.get(0)?.appliedSeq === replication.log.lastSeq, "the standby acknowledged the whole log");

    const replica = standby.replica();
    expect(replica.leaderId).toBe(leader.leaderId);
    const summary = replica.promote();
    closers.push(() => replica.close());
    expect(summary.tokens).toBe(held.size + 1);
    for (const [token, ns] of [...held, [early.token, "ns-a"] as const]) {
      expect((await replica.refresh(ns, { tokens: [token] })).refreshed).toEqual([token]);
    }
    for (const token of released) {
      for (let n = 0; n < 4; n++) expect((await replica.refresh(`ns-${n}`, { tokens: [token] })).refreshed).toEqual([]);
    }
    // A held exclusive lock still excludes on the promoted replica.
    expect((await replica.lock("ns-a", { locks: [{ descriptor: "early", mode: "exclusive" }] })).status).toBe("timeout");
  });
});
