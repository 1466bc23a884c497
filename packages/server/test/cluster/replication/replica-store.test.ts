import { describe, expect, it } from "vitest";
import { ReplicaStore, type ReplicaSink } from "../../../src/cluster/replication/replica-store.js";
import { parseReplicationMessage, ReplicationRefusal, type ReplicationMessage, type StreamIdentity } from "../../../src/cluster/replication/replication-wire.js";

/** A sink that keeps what it was given, and fails on an entry `"bad"` or a snapshot `"bad"`. */
class ListSink implements ReplicaSink {
  items: unknown[] = [];
  restore(snapshot: unknown): void {
    if (snapshot === "bad") throw new Error("not a table");
    this.items = [...(snapshot as unknown[])];
  }
  apply(entry: unknown): void {
    if (entry === "bad") throw new Error("unknown entry");
    this.items.push(entry);
  }
}

const stream = (over: Partial<StreamIdentity> = {}): StreamIdentity => ({
  shard: 2,
  epoch: 5,
  leaderId: "L5",
  leaderIncarnation: "leader-a",
  standbyIncarnation: "standby-1",
  streamId: "s1",
  ...over,
});
const snapshot = (seq: number, items: unknown[], over: Partial<StreamIdentity> = {}): ReplicationMessage => ({ kind: "snapshot", stream: stream(over), seq, snapshot: items });
const entries = (fromSeq: number, items: unknown[], over: Partial<StreamIdentity> = {}): ReplicationMessage => ({ kind: "entries", stream: stream(over), fromSeq, entries: items });

function store(rowEpoch: number | null = 5) {
  const sinks: ListSink[] = [];
  const s = new ReplicaStore({
    incarnation: "standby-1",
    shards: () => 8,
    rowEpoch: () => rowEpoch,
    createSink: () => {
      const sink = new ListSink();
      sinks.push(sink);
      return sink;
    },
  });
  return { s, sinks, items: () => (s.get(2)?.sink as ListSink | undefined)?.items };
}

const refusal = (f: () => unknown): ReplicationRefusal => {
  try {
    f();
  } catch (err) {
    if (err instanceof ReplicationRefusal) return err;
    throw err;
  }
  throw new Error("expected a refusal");
};

describe("ReplicaStore", () => {
  it("restores a snapshot, applies entries in order, skips re-sent ones and acknowledges cumulatively", () => {
    const { s, items } = store();
    expect(s.receive(snapshot(3, ["a", "b", "c"]))).toEqual({ ackedSeq: 3 });
    expect(s.receive(entries(3, ["d", "e"]))).toEqual({ ackedSeq: 5 });
    // A re-send after a lost answer: 4 and 5 are skipped, 6 applied.
    expect(s.receive(entries(3, ["d", "e", "f"]))).toEqual({ ackedSeq: 6 });
    expect(items()).toEqual(["a", "b", "c", "d", "e", "f"]);
    expect(s.get(2)?.stream.leaderId).toBe("L5");
  });

  it("a message for another incarnation of this server is refused: a restarted standby never holds the old log", () => {
    const { s, items } = store();
    s.receive(snapshot(1, ["a"]));
    const r = refusal(() => s.receive(entries(1, ["b"], { standbyIncarnation: "standby-0" })));
    expect(r.code).toBe("STANDBY_RESTARTED");
    expect(r.status).toBe(409);
    expect(r.message).toMatch(/restarted/);
    expect(refusal(() => s.receive(snapshot(1, ["x"], { standbyIncarnation: "standby-0" }))).code).toBe("STANDBY_RESTARTED");
    expect(items()).toEqual(["a"]);
  });

  it("an old epoch is refused, by the replica's epoch and by the row's, and changes nothing", () => {
    const { s, items } = store(6);
    expect(refusal(() => s.receive(snapshot(1, ["old"], { epoch: 5 }))).code).toBe("STALE_EPOCH");
    expect(s.get(2)).toBeUndefined();
    s.receive(snapshot(2, ["x", "y"], { epoch: 7, leaderIncarnation: "leader-b", streamId: "s7" }));
    const r = refusal(() => s.receive(snapshot(9, ["old"], { epoch: 6 })));
    expect(r.code).toBe("STALE_EPOCH");
    expect(r.message).toMatch(/epoch 6 is stale.*epoch 7/);
    // Same epoch from another leader process: refused too.
    expect(refusal(() => s.receive(snapshot(9, ["z"], { epoch: 7, leaderIncarnation: "leader-c" }))).code).toBe("STALE_EPOCH");
    expect(items()).toEqual(["x", "y"]);
  });

  it("entries need the snapshot of their stream and no gap; a replayed older snapshot is refused", () => {
    const { s, items } = store();
    expect(refusal(() => s.receive(entries(0, ["a"]))).code).toBe("NEEDS_SNAPSHOT");
    s.receive(snapshot(2, ["a", "b"]));
    expect(refusal(() => s.receive(entries(2, ["c"], { streamId: "other" }))).code).toBe("NEEDS_SNAPSHOT");
    expect(refusal(() => s.receive(entries(3, ["d"]))).code).toBe("NEEDS_SNAPSHOT");
    s.receive(entries(2, ["c", "d"]));
    expect(refusal(() => s.receive(snapshot(2, ["a", "b"]))).code).toBe("STALE_SNAPSHOT");
    // A new stream of the same term (a re-sync) at or past what was applied replaces the replica.
    expect(s.receive(snapshot(6, ["a", "b", "c", "d", "e", "f"], { streamId: "s2" }))).toEqual({ ackedSeq: 6 });
    expect(items()).toEqual(["a", "b", "c", "d", "e", "f"]);
  });

  it("a snapshot that cannot be restored changes nothing; an entry that cannot be applied drops the replica", () => {
    const { s, items } = store();
    s.receive(snapshot(1, ["a"]));
    expect(refusal(() => s.receive(snapshot(4, "bad" as unknown as unknown[], { streamId: "s2" }))).code).toBe("INVALID_ARGUMENT");
    expect(items()).toEqual(["a"]);
    expect(s.get(2)?.stream.streamId).toBe("s1");
    expect(refusal(() => s.receive(entries(1, ["b", "bad", "c"]))).code).toBe("REPLICA_DIVERGED");
    expect(s.get(2)).toBeUndefined();
  });

  it("parses messages strictly, naming the field", () => {
    expect(() => parseReplicationMessage({ kind: "entries", stream: stream(), fromSeq: -1, entries: [] }, 2)).toThrow(/fromSeq must be a non-negative integer/);
    expect(() => parseReplicationMessage({ kind: "entries", stream: stream(), fromSeq: 0, entries: [] }, 3)).toThrow(/stream.shard is 2 but the route names shard 3/);
    expect(() => parseReplicationMessage({ kind: "nope", stream: stream() }, 2)).toThrow(/kind must be/);
    expect(() => parseReplicationMessage({ kind: "snapshot", stream: { ...stream(), leaderId: "" }, seq: 0, snapshot: [] }, 2)).toThrow(/stream.leaderId/);
    expect(parseReplicationMessage(JSON.parse(JSON.stringify(entries(1, [{ x: 1 }]))), 2)).toEqual(entries(1, [{ x: 1 }]));
  });
});
