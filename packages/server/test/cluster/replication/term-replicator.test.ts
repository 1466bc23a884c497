import { describe, expect, it } from "vitest";
import { ReplicaStore } from "../../../src/cluster/replication/replica-store.js";
import { ShardReplicaSink, snapshotShard, type ReplicaTable, type ReplicatedTable } from "../../../src/cluster/replication/replicated-tables.js";
import { TermReplicator } from "../../../src/cluster/replication/term-replicator.js";
import { FakeReplicationClock, settle } from "./fake-replication-clock.js";
import { inProcessReplication } from "./in-process-replication.js";

type Entry = { type: "grant" | "release"; token: string };

/** A leader table: tokens per namespace, every change fed to the sink. */
class LeaderTable implements ReplicatedTable {
  readonly tokens = new Map<string, Set<string>>();
  private sink: ((ns: string, entry: Entry) => void) | null = null;
  setReplicationSink(sink: ((ns: string, entry: Entry) => void) | null): void {
    this.sink = sink;
  }
  exportNamespaces(): Record<string, unknown> {
    return Object.fromEntries([...this.tokens].map(([ns, set]) => [ns, [...set]]));
  }
  grant(ns: string, token: string): string {
    let set = this.tokens.get(ns);
    if (set === undefined) this.tokens.set(ns, (set = new Set()));
    set.add(token);
    this.sink?.(ns, { type: "grant", token });
    return token;
  }
  release(ns: string, token: string): boolean {
    this.tokens.get(ns)?.delete(token);
    this.sink?.(ns, { type: "release", token });
    return true;
  }
}

/** A replica table: the same structure, changed only by images and entries. */
class FollowerTable implements ReplicaTable {
  readonly tokens = new Map<string, Set<string>>();
  restoreNamespace(ns: string, image: never): void {
    this.tokens.set(ns, new Set(image as string[]));
  }
  close(): Promise<void> {
    return Promise.resolve();
  }
  applyEntry(ns: string, raw: never): void {
    const entry = raw as Entry;
    let set = this.tokens.get(ns);
    if (set === undefined) this.tokens.set(ns, (set = new Set()));
    if (entry.type === "grant") set.add(entry.token);
    else set.delete(entry.token);
  }
}

function setup() {
  const clock = new FakeReplicationClock();
  const leader = new LeaderTable();
  const followers: FollowerTable[] = [];
  const store = new ReplicaStore({
    incarnation: "s-inc",
    shards: () => 4,
    rowEpoch: () => null,
    createSink: () => {
      const table = new FollowerTable();
      followers.push(table);
      return new ShardReplicaSink(table);
    },
  });
  const answers: (() => void)[] = [];
  let manual = false;
  const replication = inProcessReplication(store, () => snapshotShard(leader), clock, () => manual, answers);
  const replicator = new TermReplicator(leader, replication, { needsAck: (e) => (e as Entry).type === "grant" });
  replicator.start();
  return {
    clock,
    leader,
    replicator,
    replication,
    follower: () => followers.at(-1)!,
    hold: () => (manual = true),
    release: async () => {
      for (const deliver of answers.splice(0)) deliver();
      await settle();
    },
    answers,
  };
}

/** An answer as the term gives it: at once, or once the standby holds what is pending (revealed-answers.ts). */
function held<A>(replicator: TermReplicator, operation: () => A): A | Promise<A> {
  const value = operation();
  const pending = replicator.settled();
  return pending === null ? value : pending.then(() => value);
}

describe("TermReplicator", () => {
  it("a standby joins by the table's snapshot and follows its change feed; the replica holds what the leader holds", async () => {
    const s = setup();
    s.leader.grant("ns-a", "t1");
    s.leader.grant("ns-b", "t2");
    await s.clock.endTurn();
    expect(await s.replication.attach({ serverId: "s", incarnation: "s-inc", url: "http://s.invalid" })).toBe(true);
    await settle();
    expect(s.replication.rule.state).toBe("in-sync");
    const granted = held(s.replicator, () => s.leader.grant("ns-a", "t3"));
    expect(granted).toBeInstanceOf(Promise);
    await s.clock.endTurn();
    expect(await granted).toBe("t3");
    s.leader.release("ns-b", "t2");
    await s.clock.endTurn();
    // A release no answer waits for is due a little later (it would travel with the next grant).
    expect(s.follower().tokens).not.toEqual(s.leader.tokens);
    await s.clock.advance(2);
    expect(s.follower().tokens).toEqual(s.leader.tokens);
  });

  it("holds a grant's answer until the standby acknowledged it; a release is answered at once", async () => {
    const s = setup();
    await s.replication.attach({ serverId: "s", incarnation: "s-inc", url: "http://s.invalid" });
    await settle();
    let answered: string | null = null;
    void Promise.resolve(held(s.replicator, () => s.leader.grant("ns", "t1"))).then((t) => (answered = t));
    s.hold();
    await s.clock.endTurn();
    expect(answered).toBeNull();
    // A release needs no acknowledgement: it adds nothing an answer must wait for.
    const needed = s.replicator.neededSeq;
    s.leader.release("ns", "t0");
    expect(s.replicator.neededSeq).toBe(needed);
    await s.release();
    expect(answered).toBe("t1");
  });
});
