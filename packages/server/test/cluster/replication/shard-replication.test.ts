import pino from "pino";
import { describe, expect, it } from "vitest";
import type { Coordinator, LeaderTerm, MemberIdentity } from "../../../src/cluster/coordinator.js";
import { ReplicaStore, type ReplicaSink } from "../../../src/cluster/replication/replica-store.js";
import type { ReplicationTransport } from "../../../src/cluster/replication/replication-sender.js";
import type { ReplicationMessage } from "../../../src/cluster/replication/replication-wire.js";
import { ShardReplication, type StandbyTarget } from "../../../src/cluster/replication/shard-replication.js";
import { FakeReplicationClock, settle } from "./fake-replication-clock.js";

const LATE_MS = 1_000;
const term: LeaderTerm = { shard: 1, epoch: 4, serverId: "leader", incarnation: "leader-inc" };

/** The shard's row with the coordinator's fencing: epoch and incarnation, and rounds. */
class FakeCoordinator implements Pick<Coordinator, "nameStandby" | "setInSync"> {
  row = { epoch: 4, incarnation: "leader-inc", standby: null as MemberIdentity | null, inSync: false, round: 0 };
  readonly writes: string[] = [];
  private fenced(t: LeaderTerm, round: number): boolean {
    return t.epoch !== this.row.epoch || t.incarnation !== this.row.incarnation || round <= this.row.round;
  }
  nameStandby(t: LeaderTerm, standby: MemberIdentity | null, round: number): Promise<boolean> {
    this.writes.push(`name ${standby?.incarnation ?? "none"}`);
    if (this.fenced(t, round)) return Promise.resolve(false);
    this.row = { ...this.row, standby, inSync: false, round };
    return Promise.resolve(true);
  }
  setInSync(t: LeaderTerm, incarnation: string, inSync: boolean, round: number): Promise<boolean> {
    this.writes.push(`in_sync=${inSync}`);
    if (this.fenced(t, round) || (inSync && this.row.standby?.incarnation !== incarnation)) return Promise.resolve(false);
    this.row = { ...this.row, inSync, round };
    return Promise.resolve(true);
  }
}

class ListSink implements ReplicaSink {
  items: unknown[] = [];
  restore(snapshot: unknown): void {
    this.items = [...(snapshot as unknown[])];
  }
  apply(entry: unknown): void {
    this.items.push(entry);
  }
}

/** A standby process: its replica store, reached in-process through a JSON round trip. */
class Standby {
  readonly store: ReplicaStore;
  paused = false;
  constructor(readonly incarnation: string) {
    this.store = new ReplicaStore({ incarnation, shards: () => 4, rowEpoch: () => null, createSink: () => new ListSink() });
  }
  get target(): StandbyTarget {
    return { serverId: "standby", incarnation: this.incarnation, url: "http://standby.invalid" };
  }
  items(): unknown[] | undefined {
    return (this.store.get(term.shard)?.sink as ListSink | undefined)?.items;
  }
}

function setup() {
  const clock = new FakeReplicationClock();
  const coordinator = new FakeCoordinator();
  const table: unknown[] = ["held-before"];
  let standby = new Standby("standby-1");
  const lost: string[] = [];
  let fenced = 0;
  const connect = (): ReplicationTransport => ({
    send: async (m: ReplicationMessage) => {
      await Promise.resolve();
      if (standby.paused) return new Promise(() => undefined);
      return standby.store.receive(JSON.parse(JSON.stringify(m)) as ReplicationMessage);
    },
    close: () => Promise.resolve(),
  });
  const replication = new ShardReplication({
    term,
    leaderId: "L4",
    coordinator,
    connect,
    snapshot: () => [...table],
    clock,
    lateMs: LATE_MS,
    logger: pino({ level: "silent" }),
    onFenced: () => fenced++,
    onStandbyLost: (reason) => lost.push(reason),
  });
  /** A grant: the table changes and its entry is appended in the same turn. */
  const grant = (what: string): number => {
    table.push(what);
    return replication.append(what);
  };
  return {
    clock,
    coordinator,
    replication,
    table,
    grant,
    lost,
    fenced: () => fenced,
    standby: () => standby,
    restartStandby: (incarnation: string) => (standby = new Standby(incarnation)),
  };
}

describe("ShardReplication", () => {
  it("names the standby, sends the snapshot and the log; the row says in sync once it holds them; grants wait for acknowledgement", async () => {
    const s = setup();
    expect(await s.replication.attach(s.standby().target)).toBe(true);
    await settle();
    expect(s.coordinator.row).toMatchObject({ standby: { incarnation: "standby-1" }, inSync: true });
    const outcomes = await Promise.all(["g1", "g2", "g3"].map((g) => s.replication.whenAcked(s.grant(g))).concat([s.clock.endTurn().then(() => "acked" as const)]));
    expect(outcomes).toEqual(["acked", "acked", "acked", "acked"]);
    expect(s.standby().items()).toEqual(s.table);
    expect(s.standby().store.get(term.shard)?.stream).toMatchObject({ epoch: 4, leaderId: "L4", leaderIncarnation: "leader-inc" });
  });

  it("a restarted standby refuses the stream: the row is marked not in sync before the grant is answered, and a re-attach sends the new incarnation a snapshot", async () => {
    const s = setup();
    await s.replication.attach(s.standby().target);
    await settle();
    s.restartStandby("standby-2");
    const rowAtAnswer: boolean[] = [];
    const p = s.replication.whenAcked(s.grant("g1")).then((o) => {
      rowAtAnswer.push(s.coordinator.row.inSync);
      return o;
    });
    await s.clock.endTurn();
    expect(await p).toBe("unreplicated");
    expect(rowAtAnswer).toEqual([false]);
    expect(s.lost).toEqual(["not in sync"]);
    // The new incarnation holds nothing of the old stream until it gets a snapshot.
    expect(s.standby().items()).toBeUndefined();
    expect(await s.replication.attach(s.standby().target)).toBe(true);
    await settle();
    expect(s.coordinator.row).toMatchObject({ standby: { incarnation: "standby-2" }, inSync: true });
    expect(s.standby().items()).toEqual(s.table);
  });

  it("a standby that stops acknowledging: after a third of the leader lease the row says not in sync, then the grant is answered", async () => {
    const s = setup();
    await s.replication.attach(s.standby().target);
    await settle();
    s.standby().paused = true;
    let answered = false;
    void s.replication.whenAcked(s.grant("g1")).then(() => (answered = true));
    await s.clock.endTurn();
    await s.clock.advance(LATE_MS - 1);
    expect(answered).toBe(false);
    expect(s.coordinator.row.inSync).toBe(true);
    expect(s.replication.view()).toMatchObject({ lagEntries: 1, inSync: true });
    await s.clock.advance(1);
    expect(answered).toBe(true);
    expect(s.coordinator.row.inSync).toBe(false);
    expect(s.coordinator.writes).toEqual(["name standby-1", "in_sync=true", "in_sync=false"]);
  });

  it("a deposed leader's standby write changes nothing and ends its term", async () => {
    const s = setup();
    s.coordinator.row.epoch = 5;
    expect(await s.replication.attach(s.standby().target)).toBe(false);
    expect(s.fenced()).toBe(1);
    expect(s.coordinator.row.standby).toBeNull();
    expect(s.standby().items()).toBeUndefined();
  });
});
