import pino from "pino";
import { describe, expect, it } from "vitest";
import { ClusterMetrics } from "../../../src/cluster/cluster-metrics.js";
import type { Coordinator } from "../../../src/cluster/coordinator.js";
import { ShardMover, type ShardMoverHost } from "../../../src/cluster/replication/shard-mover.js";
import type { ShardTerm } from "../../../src/cluster/shard-term.js";
import type { TestBreak } from "../../../src/cluster/test-breaks.js";
import { LATE_MS, setup } from "./shard-replication-fixture.js";

const settle = async (): Promise<void> => {
  for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
};

describe("ShardReplication.confirmStandby: a stop's proof that the in-sync standby still answers", () => {
  it("answers true within two polls (a tenth of the lateness bound) from a live standby, with no write", async () => {
    const s = setup();
    await s.replication.attach(s.standby().target);
    await settle();
    let confirmed: boolean | null = null;
    void s.replication.confirmStandby().then((c) => (confirmed = c));
    await s.clock.advance(LATE_MS / 10);
    expect(confirmed).toBe(true);
    expect(s.coordinator.writes).toEqual(["name standby-1", "in_sync=true"]);
  });

  it("answers false within the lateness bound from a standby that stopped answering, and the row says not in sync", async () => {
    const s = setup();
    await s.replication.attach(s.standby().target);
    await settle();
    s.standby().paused = true;
    let confirmed: boolean | null = null;
    void s.replication.confirmStandby().then((c) => (confirmed = c));
    await s.clock.advance(LATE_MS / 2);
    expect(confirmed).toBeNull();
    await s.clock.advance(LATE_MS / 2 + LATE_MS / 10);
    await settle();
    expect(confirmed).toBe(false);
    expect(s.coordinator.writes).toEqual(["name standby-1", "in_sync=true", "in_sync=false"]);
    expect(s.coordinator.row.inSync).toBe(false);
  });
});

/**
 * A term in sync with standby `s`, which stopped moments ago (its leader has not noticed): it
 * answers no probe and never acknowledges the hand-over entry. Once recorded not in sync, the term
 * can attach `t` (alive), which comes in sync at once.
 */
function termWithGoneStandby(events: string[]): ShardTerm {
  const gone = { serverId: "s", incarnation: "s-1", url: "http://s" };
  const replication = {
    standby: gone as { serverId: string; incarnation: string; url: string } | null,
    rule: { state: "in-sync" },
    log: { lastSeq: 3 },
    append: () => 4,
    whenAcked: () => Promise.resolve(replication.standby === gone ? ("unreplicated" as const) : ("acked" as const)),
    // No standby move under way.
    settleMove: () => Promise.resolve(),
    confirmStandby: () => {
      events.push("confirm 0");
      replication.rule.state = "out";
      return Promise.resolve(false);
    },
    attach: (target: { serverId: string; incarnation: string; url: string }) => {
      replication.standby = target;
      replication.rule.state = "in-sync";
      return Promise.resolve(true);
    },
    dropStandby: () => undefined,
    clock: { now: () => 0, setTimer: () => () => undefined, defer: (fn: () => void) => fn() },
  };
  return { shard: 0, epoch: 7, leaderId: "L", waiting: false, replicator: { replication }, handedOver: { locks: 1, waiters: 0 }, finishHandOver: () => undefined, heldBackPlaces: () => ({}) } as unknown as ShardTerm;
}

function stoppingMover(term: ShardTerm, events: string[], breaks: TestBreak[]): ShardMover {
  const coordinator = {
    handOver: async (t: { shard: number }, standby: { serverId: string }) => {
      events.push(`handOver ${t.shard} to ${standby.serverId}`);
      return { shard: t.shard, epoch: 8, url: `http://${standby.serverId}` };
    },
    release: async (_: string, released: { shard: number }[]) => {
      events.push(`release ${released.map((t) => t.shard).join(",")}`);
    },
    readStandbyCandidates: async () => [{ serverId: "t", incarnation: "t-1", url: "http://t", ready: true }],
  } as unknown as Coordinator;
  const host: ShardMoverHost = {
    options: { coordinator, serverId: "me", leaderLeaseMs: 1_000, logger: pino({ level: "silent" }), metrics: new ClusterMetrics(() => 0, () => true), breaks: new Set(breaks) },
    incarnation: "me-1",
    led: () => term,
    terms: () => [term],
    leases: () => [],
    members: () => [],
    answering: () => true,
    lose: (t) => events.push(`lose ${t.shard}`),
    handedOver: (t) => events.push(`handedOver ${t.shard}`),
    stopping: () => true,
    warn: () => undefined,
    promoter: () => null,
  };
  return new ShardMover(host);
}

describe("ShardMover.stopAll: a standby named in sync is confirmed before the shard is handed to it", () => {
  it("a shard whose standby is gone gets another standby and is handed over with its table, not released", async () => {
    const events: string[] = [];
    const term = termWithGoneStandby(events);
    await stoppingMover(term, events, []).stopAll([term], Promise.resolve());
    expect(events).toEqual(["confirm 0", "lose 0", "handOver 0 to t", "handedOver 0"]);
  });

  it("negative control (stop-unconfirmed-standby): the shard is handed to the gone standby, which never acknowledges, and released with its table", async () => {
    const events: string[] = [];
    const term = termWithGoneStandby(events);
    await stoppingMover(term, events, ["stop-unconfirmed-standby"]).stopAll([term], Promise.resolve());
    expect(events).toEqual(["lose 0", "release 0"]);
  });
});
