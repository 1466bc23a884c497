import { createServer, type Server } from "node:net";
import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import type { Coordinator, LiveMember, ShardLease } from "../../../src/cluster/coordinator.js";
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
 * A LeaderSide leading one idle shard (no grant, no release: nothing is ever sent to refuse), its
 * standby b streamed to through an echo server that acknowledges every message (the benchmark's
 * floor transport, so no real standby process is needed), and a runtime whose member list the test
 * sets as a heartbeat would.
 */
async function setup() {
  const echo: Server = createServer((socket) => {
    socket.on("error", () => undefined);
    socket.pipe(socket);
  });
  await new Promise<void>((resolve) => echo.listen(0, "127.0.0.1", resolve));
  const table = new InMemoryLockService({ leaderId: "L1", logger });
  const term = { shard: 0, epoch: 1, leaderId: "L1", service: table, isEnded: false, handingOver: false, replicator: null as unknown, leaseWaitLeftMs: () => 0 } as unknown as ShardTerm;
  // The leader side attaches the term's replicator as it does a real term's.
  (term as unknown as { attachReplicator: (r: unknown) => void }).attachReplicator = (r) => ((term as unknown as { replicator: unknown }).replicator = r);
  const writes: string[] = [];
  const coordinator = {
    readStandbyCandidates: () => Promise.resolve([{ ...B, url: "http://b.invalid" }]),
    nameStandby: (_t: unknown, standby: { serverId: string } | null) => (writes.push(`name ${standby?.serverId ?? "none"}`), Promise.resolve(true)),
    setInSync: (_t: unknown, _inc: string, inSync: boolean) => (writes.push(`in_sync=${inSync}`), Promise.resolve(true)),
  } as unknown as Coordinator;
  const runtime: { -readonly [K in keyof LeaderSideRuntime]: LeaderSideRuntime[K] } = {
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
  });
  return {
    side,
    term,
    writes,
    /** A heartbeat sent now answered `members`. */
    heard: (members: LiveMember[]) => (runtime.memberList = { members, sentAt: performance.now() }),
    close: async () => {
      side.stop();
      await table.close();
      await new Promise((resolve) => echo.close(resolve));
    },
  };
}

describe("LeaderSide: the standby of an idle shard", () => {
  let s: Awaited<ReturnType<typeof setup>> | null = null;
  afterEach(async () => {
    await s?.close();
    s = null;
  });

  it("gone from the member list (it stopped, or its heartbeat aged out): recorded not in sync at the next round, though the shard sends it nothing", async () => {
    s = await setup();
    await s.side.tick();
    const rule = () => s!.term.replicator?.replication.rule.state;
    await waitFor(() => rule() === "in-sync", "b in sync");
    expect(s.writes).toEqual(["name b", "in_sync=true"]);
    // A heartbeat sent after the attach still names b: nothing changes.
    s.heard([B]);
    await s.side.tick();
    expect(rule()).toBe("in-sync");
    // b left the list.
    s.heard([]);
    await s.side.tick();
    await waitFor(() => s!.writes.includes("in_sync=false"), "b recorded not in sync");
    expect(rule()).not.toBe("in-sync");
  });
});
