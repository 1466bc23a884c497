import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { LockResponse } from "@leasehold/protocol";
import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import type { Coordinator } from "../../../src/cluster/coordinator.js";
import { realProcessClock } from "../../../src/cluster/process-clock.js";
import { newClusterKey } from "../../../src/cluster/replication/cluster-key.js";
import { createHttpReplicationTransport } from "../../../src/cluster/replication/http-replication-transport.js";
import { ReplicaStore } from "../../../src/cluster/replication/replica-store.js";
import { ShardReplicaSink, snapshotShard } from "../../../src/cluster/replication/replicated-tables.js";
import { createReplicationRoute } from "../../../src/cluster/replication/replication-route.js";
import { RevealedAnswers } from "../../../src/cluster/replication/revealed-answers.js";
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

  /**
   * 48 concurrent clients lock through the leader while it streams to a standby over a real
   * socket; `holdAnswers` false answers grants without waiting for the acknowledgement (the rule
   * removed). Answers the grants whose client was told before the standby's table held them, and
   * the rest for the checks after promotion.
   */
  async function scenario(holdAnswers: boolean) {
    const key = newClusterKey();
    const standby = await standbyServer(key);
    // Leases far longer than the test: every lock not unlocked is still held at the end.
    const leader = new InMemoryLockService({ leaderId: "leader-term-1", leaseMs: 120_000, logger });
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
      clock: realProcessClock,
      lateMs: 60_000,
      logger,
      onFenced: () => undefined,
      onStandbyLost: () => undefined,
    });
    closers.push(async () => replication.close(new Error("test over")));
    const replicator = new TermReplicator(leader, replication, { needsAck: (e) => holdAnswers && (e as { type?: string }).type === "grant" });
    replicator.start();
    const answers = new RevealedAnswers();
    answers.attach(replicator);
    expect(await replication.attach({ serverId: "standby", incarnation: "standby-inc", url: standby.url })).toBe(true);
    await waitFor(() => replication.rule.state === "in-sync", "the standby in sync");

    // 48 concurrent clients on contended descriptors: many wait for another's unlock (a waiter
    // entry, then its grant); every grant is answered only once the standby acknowledged it.
    const held = new Map<string, string>();
    const released = new Set<string>();
    const missing: string[] = [];
    const client = async (c: number): Promise<void> => {
      for (let i = 0; i < 8; i++) {
        const ns = `ns-${c % 4}`;
        const descriptor = i === 7 ? `kept-${c}-${i}` : `d-${(c + i) % 6}`;
        const answer = await answers.answer(() => leader.lock(ns, { locks: [{ descriptor, mode: c % 3 === 0 ? "shared" : "exclusive" }], acquireTimeoutMs: 2_000 }));
        if (answer.status !== "acquired") continue;
        // The rule: the standby's table holds the grant before its client is told.
        const image = standby.replica().exportNamespace(ns);
        if (!image.tokens.some((t) => t.token === answer.token)) missing.push(answer.token);
        if (i < 7) {
          await new Promise((r) => setTimeout(r, 1));
          await leader.unlock(ns, { tokens: [answer.token] });
          released.add(answer.token);
        } else held.set(answer.token, ns);
      }
    };
    await Promise.all(Array.from({ length: 48 }, (_, c) => client(c)));
    expect(held.size).toBe(48);
    await waitFor(() => standby.store.get(0)?.appliedSeq === replication.log.lastSeq, "the standby acknowledged the whole log");

    return { missing, held, released, early, replica: standby.replica(), leader };
  }

  it("under concurrent load, every grant is held by the standby before its client is told, and the promoted replica holds every lock not released, same tokens and leader id", async () => {
    const { missing, held, released, early, replica, leader } = await scenario(true);
    expect(missing).toEqual([]);
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

  it("negative control: with answers not held for the acknowledgement, the same check finds grants told before the standby held them", async () => {
    const { missing } = await scenario(false);
    expect(missing.length).toBeGreaterThan(0);
  });
});
