import pino from "pino";
import { describe, expect, it } from "vitest";
import type { ShardLease } from "../../../src/cluster/coordinator.js";
import { ReplicaPromoter } from "../../../src/cluster/replication/promote-replica.js";
import { ReplicaStore, type ReplicaSink } from "../../../src/cluster/replication/replica-store.js";
import type { StreamIdentity } from "../../../src/cluster/replication/replication-wire.js";

/** A sink whose snapshot is the images it was restored with. */
class ImageSink implements ReplicaSink {
  images: Record<string, unknown> = {};
  disposed = false;
  restore(snapshot: unknown): void {
    this.images = { ...(snapshot as Record<string, unknown>) };
  }
  apply(): void {}
  snapshot(): unknown {
    return { namespaces: this.images };
  }
  dispose(): void {
    this.disposed = true;
  }
}

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
  it("names the hand-over its replica implies (epoch + 1, same leaderId), and keeps the pass off the shard until the attempt ends", () => {
    const { p } = promoter();
    expect(p.beginNotifiedAdoption(2)).toEqual({ epoch: 6, leaderId: "L5" });
    // A second NOTIFY meanwhile tries nothing; a pass that reads the handed-over row neither
    // adopts it again nor releases it as an orphan.
    expect(p.beginNotifiedAdoption(2)).toBeNull();
    const adopted: number[] = [];
    const release = p.adoptOrAnswer([{ shard: 2, epoch: 6 }], [undefined, undefined, handedRow] as ShardLease[], (row) => {
      adopted.push(row.shard);
      return Promise.resolve();
    });
    expect(release).toEqual([]);
    expect(adopted).toEqual([]);
    p.endNotifiedAdoption(2);
    expect(p.beginNotifiedAdoption(2)).toEqual({ epoch: 6, leaderId: "L5" });
  });

  it("keeps the replica from a stale-replica drop while the attempt runs (a pass read the handed-over row), and lets the drop happen after", () => {
    const { store, p } = promoter();
    p.beginNotifiedAdoption(2);
    store.drop(2);
    expect(store.get(2)).toBeDefined();
    expect(p.takeHandedOver(2, 6, "L5")?.namespaces).toEqual({ ns: "image" });
    p.endNotifiedAdoption(2);
    // Without an attempt in flight, a drop forgets it as before.
    const again = promoter();
    again.p.beginNotifiedAdoption(2);
    again.p.endNotifiedAdoption(2);
    again.store.drop(2);
    expect(again.store.get(2)).toBeUndefined();
  });

  it("tries nothing for a shard it holds no replica of, or under the promote-any-replica test break", () => {
    expect(promoter().p.beginNotifiedAdoption(3)).toBeNull();
    expect(promoter(true).p.beginNotifiedAdoption(2)).toBeNull();
  });

  it("hands the replica over only for the term just before the adopted epoch, with its leaderId; otherwise leaves it in the store", () => {
    const { store, p } = promoter();
    expect(p.takeHandedOver(2, 7, "L5")).toBeNull();
    expect(p.takeHandedOver(2, 6, "L6")).toBeNull();
    expect(store.get(2)).toBeDefined();
    const sink = store.get(2)!.sink as ImageSink;
    expect(p.takeHandedOver(2, 6, "L5")).toEqual({ leaderId: "L5", epoch: 5, namespaces: { ns: "image" } });
    expect(store.get(2)).toBeUndefined();
    expect(sink.disposed).toBe(true);
  });
});
