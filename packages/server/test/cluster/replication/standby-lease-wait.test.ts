import { createServer, type Server } from "node:net";
import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import type { Coordinator, ShardLease } from "../../../src/cluster/coordinator.js";
import { ClusterKeyHolder } from "../../../src/cluster/replication/cluster-key-holder.js";
import { LeaderSide, type LeaderSideRuntime } from "../../../src/cluster/replication/leader-side.js";
import { ReplicationMetrics } from "../../../src/cluster/replication/replication-metrics.js";
import type { StandbySide } from "../../../src/cluster/replication/standby-side.js";
import type { ShardTerm } from "../../../src/cluster/shard-term.js";
import { InMemoryLockService } from "../../../src/service/in-memory-lock-service.js";
import { waitFor } from "../../support/wait-for.js";

const logger = pino({ level: "silent" });
const B = { serverId: "b", incarnation: "b-inc", ready: true };

/**
 * Found by pnpm sim (seed 274): a term acquired empty after its leader's crash was still inside its
 * lease-wait when it got an in-sync standby; its own leader then crashed too, and the standby took
 * the shard over with the empty table and no lease-wait, granting a lock a client of the first
 * leader still held (a second holder). A LeaderSide leading one shard whose term is `waiting`, its
 * candidate standby b reached through an echo server that acknowledges every message.
 */
async function setup(waiting: () => boolean, standbyDuringLeaseWait: boolean) {
  const echo: Server = createServer((socket) => {
    socket.on("error", () => undefined);
    socket.pipe(socket);
  });
  await new Promise<void>((resolve) => echo.listen(0, "127.0.0.1", resolve));
  const table = new InMemoryLockService({ leaderId: "L1", logger });
  const term = { shard: 0, epoch: 1, leaderId: "L1", service: table, isEnded: false, handingOver: false, replicator: null as unknown } as unknown as ShardTerm;
  Object.defineProperty(term, "waiting", { get: waiting });
  (term as unknown as { attachReplicator: (r: unknown) => void }).attachReplicator = (r) => ((term as unknown as { replicator: unknown }).replicator = r);
  const writes: string[] = [];
  const coordinator = {
    readStandbyCandidates: () => Promise.resolve([{ ...B, url: "http://b.invalid" }]),
    nameStandby: (_t: unknown, standby: { serverId: string } | null) => (writes.push(`name ${standby?.serverId ?? "none"}`), Promise.resolve(true)),
    setInSync: (_t: unknown, _inc: string, inSync: boolean) => (writes.push(`in_sync=${inSync}`), Promise.resolve(true)),
  } as unknown as Coordinator;
  const runtime: LeaderSideRuntime = {
    terms: [term],
    leases: [{ shard: 0, standbyId: null } as unknown as ShardLease],
    identity: { incarnation: "a-inc" },
    memberList: { members: [B], sentAt: performance.now() },
  };
  const key = new ClusterKeyHolder();
  key.set(Buffer.alloc(32, 1));
  const standby = { store: { shards: () => [], get: () => undefined, drop: () => undefined } } as unknown as StandbySide;
  const side = new LeaderSide({
    runtime,
    serverId: "a",
    coordinator,
    key,
    leaderLeaseMs: 3_000,
    logger,
    metrics: new ReplicationMetrics(() => []),
    standby,
    echoStandbyPort: (echo.address() as { port: number }).port,
    standbyDuringLeaseWait,
  });
  return {
    side,
    writes,
    close: async () => {
      side.stop();
      await table.close();
      await new Promise((resolve) => echo.close(resolve));
    },
  };
}

describe("LeaderSide: a term inside its lease-wait gets no standby", () => {
  let s: Awaited<ReturnType<typeof setup>> | null = null;
  afterEach(async () => {
    await s?.close();
    s = null;
  });

  it("names none while the term waits, and one at the first round after the wait ended", async () => {
    let waiting = true;
    s = await setup(() => waiting, false);
    await s.side.tick();
    await s.side.tick();
    await new Promise((r) => setTimeout(r, 50));
    expect(s.writes).toEqual([]);
    waiting = false;
    await s.side.tick();
    await waitFor(() => s!.writes.includes("in_sync=true"), "b in sync");
    expect(s.writes).toEqual(["name b", "in_sync=true"]);
  });

  it("negative control (standby-during-lease-wait): the waiting term's standby is named and recorded in sync", async () => {
    s = await setup(() => true, true);
    await s.side.tick();
    await waitFor(() => s!.writes.includes("in_sync=true"), "b in sync");
    expect(s.writes).toEqual(["name b", "in_sync=true"]);
  });
});
