import pino from "pino";
import type { Coordinator, LeaderTerm, MemberIdentity } from "../../../src/cluster/coordinator.js";
import { ReplicaStore, type ReplicaSink } from "../../../src/cluster/replication/replica-store.js";
import type { ReplicationTransport } from "../../../src/cluster/replication/replication-sender.js";
import type { ReplicationMessage } from "../../../src/cluster/replication/replication-wire.js";
import { ShardReplication, type StandbyTarget } from "../../../src/cluster/replication/shard-replication.js";
import { FakeReplicationClock } from "./fake-replication-clock.js";

/** The rule's lateness bound in these tests. */
export const LATE_MS = 1_000;
/** The leader's term the fixture replicates. */
export const term: LeaderTerm = { shard: 1, epoch: 4, serverId: "leader", incarnation: "leader-inc" };

/** The shard's row with the coordinator's fencing: epoch and incarnation, and rounds. */
export class FakeCoordinator implements Pick<Coordinator, "nameStandby" | "setInSync" | "moveStandby"> {
  row = { epoch: 4, incarnation: "leader-inc", standby: null as MemberIdentity | null, inSync: false, round: 0 };
  readonly writes: string[] = [];
  /** While set, a `moveStandby` waits here: the test applies it (or not) and answers it (or loses the answer). */
  holdMoves = false;
  readonly heldMoves: ((apply: boolean, answer: "answer" | "unknown") => void)[] = [];
  private fenced(t: LeaderTerm, round: number): boolean {
    return t.epoch !== this.row.epoch || t.incarnation !== this.row.incarnation || round <= this.row.round;
  }
  nameStandby(t: LeaderTerm, standby: MemberIdentity | null, round: number): Promise<boolean> {
    this.writes.push(`name ${standby?.incarnation ?? "none"}`);
    if (this.fenced(t, round)) return Promise.resolve(false);
    this.row = { ...this.row, standby, inSync: false, round };
    return Promise.resolve(true);
  }
  moveStandby(t: LeaderTerm, from: MemberIdentity, to: MemberIdentity, round: number): Promise<boolean> {
    this.writes.push(`move ${from.incarnation}->${to.incarnation}`);
    const run = (): boolean => {
      const names = (m: MemberIdentity): boolean => this.row.standby?.incarnation === m.incarnation;
      if (this.fenced(t, round) || !this.row.inSync || (!names(from) && !names(to))) return false;
      this.row = { ...this.row, standby: { serverId: to.serverId, incarnation: to.incarnation }, round };
      return true;
    };
    if (!this.holdMoves) return Promise.resolve(run());
    return new Promise((resolve, reject) =>
      this.heldMoves.push((apply, answer) => {
        const matched = apply ? run() : false;
        if (answer === "unknown") reject(new Error("move-standby timed out (outcome unknown)"));
        else resolve(matched);
      }),
    );
  }
  setInSync(t: LeaderTerm, incarnation: string, inSync: boolean, round: number): Promise<boolean> {
    this.writes.push(`in_sync=${inSync}`);
    if (this.fenced(t, round) || (inSync && this.row.standby?.incarnation !== incarnation)) return Promise.resolve(false);
    this.row = { ...this.row, inSync, round };
    return Promise.resolve(true);
  }
}

/** A replica sink holding a plain list. */
export class ListSink implements ReplicaSink {
  items: unknown[] = [];
  restore(snapshot: unknown): void {
    this.items = [...(snapshot as unknown[])];
  }
  apply(entry: unknown): void {
    this.items.push(entry);
  }
}

/** A standby process: its replica store, reached in-process through a JSON round trip. */
export class Standby {
  readonly store: ReplicaStore;
  paused = false;
  /** Its process is gone: every exchange fails at once (connection refused). */
  dead = false;
  constructor(
    readonly incarnation: string,
    readonly serverId = "standby",
  ) {
    this.store = new ReplicaStore({ incarnation, shards: () => 4, rowEpoch: () => null, createSink: () => new ListSink() });
  }
  get target(): StandbyTarget {
    return { serverId: this.serverId, incarnation: this.incarnation, url: `http://${this.serverId}.invalid` };
  }
  items(): unknown[] | undefined {
    return (this.store.get(term.shard)?.sink as ListSink | undefined)?.items;
  }
}

/**
 * A leader's {@link ShardReplication} of `term` over a fake clock and coordinator, streaming in
 * process to the standby the target names: `standby()`, or one of `others` (by incarnation).
 */
export function setup(others: readonly Standby[] = [], unsafe: { readonly unknownMoveAsFailed?: boolean } = {}) {
  const clock = new FakeReplicationClock();
  const coordinator = new FakeCoordinator();
  const table: unknown[] = ["held-before"];
  let standby = new Standby("standby-1");
  const lost: string[] = [];
  let fenced = 0;
  const connect = (target: StandbyTarget): ReplicationTransport => ({
    send: async (m: ReplicationMessage) => {
      await Promise.resolve();
      const to = others.find((o) => o.incarnation === target.incarnation) ?? standby;
      if (to.dead) throw new Error("connect ECONNREFUSED");
      if (to.paused) return new Promise(() => undefined);
      return to.store.receive(JSON.parse(JSON.stringify(m)) as ReplicationMessage);
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
    unsafeUnknownMoveAsFailed: unsafe.unknownMoveAsFailed,
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

/**
 * The standby side both replication routes' tests serve: a store for incarnation `standby-inc` of a
 * 4-shard cluster whose rows are at epoch 3, recording every snapshot and entry it applies in `applied`.
 */
export function recordingStandbyStore(): { readonly store: ReplicaStore; readonly applied: unknown[] } {
  const applied: unknown[] = [];
  const store = new ReplicaStore({
    incarnation: "standby-inc",
    shards: () => 4,
    rowEpoch: () => 3,
    createSink: () => ({ restore: (s) => applied.push(s), apply: (e) => applied.push(e) }),
  });
  return { store, applied };
}
