import pino from "pino";
import { describe, expect, it } from "vitest";
import type { ShardLease } from "../../../src/cluster/coordinator.js";
import { ReplicaPromoter } from "../../../src/cluster/replication/promote-replica.js";
import { ReplicaStore } from "../../../src/cluster/replication/replica-store.js";
import type { StreamIdentity } from "../../../src/cluster/replication/replication-wire.js";
import { ImageSink } from "./promotion-fixture.js";

const stream: StreamIdentity = { shard: 2, epoch: 5, leaderId: "L5", leaderIncarnation: "leader-a", standbyIncarnation: "standby-1", streamId: "s1" };

/** A promoter over a store holding a replica of shard 2 following epoch 5 of leaderId L5. */
function promoter(unsafeAnyReplica = false) {
  const store = new ReplicaStore({ incarnation: "standby-1", shards: () => 8, rowEpoch: () => 5, createSink: () => new ImageSink() });
  store.receive({ kind: "snapshot", stream, seq: 1, snapshot: { ns: "image" } });
  const p = new ReplicaPromoter({ store, serverId: "b", incarnation: "standby-1", logger: pino({ level: "silent" }), unsafeAnyReplica });
  return { store, p };
}

/** Shard 2's row as the hand-over statement leaves it: held by this process at epoch 6. */
const handedRow = { shard: 2, holder: "b", incarnation: "standby-1", epoch: 6, leaderId: "L5", expired: false } as ShardLease;

describe("ReplicaPromoter: adoption tried on a NOTIFY", () => {
  it("names the replica's term (the hand-over is its epoch + 1, same leaderId), and keeps the pass off the shard until the attempt is settled", () => {
    const { p } = promoter();
    const candidate = p.beginNotifiedAdoption(2);
    expect(candidate).toEqual({ shard: 2, epoch: 5, leaderId: "L5" });
    // A second NOTIFY meanwhile tries nothing; a pass that reads the handed-over row neither
    // adopts it again nor releases it as an orphan, nor takes the shard over.
    expect(p.beginNotifiedAdoption(2)).toBeNull();
    expect(p.busy(2)).toBe(true);
    const adopted: number[] = [];
    const release = p.adoptOrAnswer([{ shard: 2, epoch: 6 }], [undefined, undefined, handedRow] as ShardLease[], (row) => {
      adopted.push(row.shard);
      return Promise.resolve();
    });
    expect(release).toEqual([]);
    expect(adopted).toEqual([]);
    p.settle(candidate!, "unmatched");
    expect(p.busy(2)).toBe(false);
    expect(p.beginNotifiedAdoption(2)).toEqual({ shard: 2, epoch: 5, leaderId: "L5" });
  });

  it("keeps the replica from a stale-replica drop while the attempt runs (a pass read the handed-over row), and lets the drop happen after", () => {
    const { store, p } = promoter();
    const candidate = p.beginNotifiedAdoption(2)!;
    store.drop(2);
    expect(store.get(2)).toBeDefined();
    expect(p.settle(candidate, "matched")?.namespaces).toEqual({ ns: "image" });
    // An attempt that matched nothing leaves the replica to a drop, as before.
    const again = promoter();
    again.p.settle(again.p.beginNotifiedAdoption(2)!, "unmatched");
    again.store.drop(2);
    expect(again.store.get(2)).toBeUndefined();
  });

  it("tries nothing for a shard it holds no replica of, or under the promote-any-replica test break", () => {
    expect(promoter().p.beginNotifiedAdoption(3)).toBeNull();
    expect(promoter(true).p.beginNotifiedAdoption(2)).toBeNull();
  });

  it("hands the replica over only while it still follows the candidate's term; otherwise leaves it in the store", () => {
    const { store, p } = promoter();
    const candidate = p.beginNotifiedAdoption(2)!;
    // A snapshot of the next term replaced the replica meanwhile.
    store.receive({ kind: "snapshot", stream: { ...stream, epoch: 6, leaderId: "L6", streamId: "s2" }, seq: 1, snapshot: { ns: "newer" } });
    expect(p.settle(candidate, "matched")).toBeNull();
    expect(store.get(2)).toBeDefined();
    const fresh = promoter();
    const sink = fresh.store.get(2)!.sink as ImageSink;
    expect(fresh.p.settle(fresh.p.beginNotifiedAdoption(2)!, "matched")).toEqual({ leaderId: "L5", epoch: 5, namespaces: { ns: "image" }, leaseWaitLeftMs: 0, heldBack: {} });
    expect(fresh.store.get(2)).toBeUndefined();
    expect(sink.disposed).toBe(true);
    // Settling twice changes nothing.
    expect(fresh.p.settle({ shard: 2, epoch: 5, leaderId: "L5" }, "matched")).toBeNull();
  });
});
