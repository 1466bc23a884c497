import pino from "pino";
import { describe, expect, it } from "vitest";
import { ReplicaPromoter } from "../../../src/cluster/replication/promote-replica.js";
import { ReplicaStore } from "../../../src/cluster/replication/replica-store.js";
import type { StreamIdentity } from "../../../src/cluster/replication/replication-wire.js";
import { ImageSink } from "./promotion-fixture.js";

/**
 * pnpm sim seed 51862 (a held lock lost through rolling restarts): member a handed shard 3 to b
 * for balance; its move statement committed but its answer was lost (a statement timeout). b
 * adopted at once and resumed its replication to a, which took b's snapshot of the new epoch.
 * Only then did a's statement fail, and a kept the table as handed over as its replica of the new
 * epoch, under a stream identity of its own: it replaced b's stream, so b's next entries were
 * refused (NEEDS_SNAPSHOT), and b's stop found its standby not in sync and released the shard
 * without its locks. A former leader must keep the taker's stream once it reached its store.
 */
function takerStreamThenFormerKept(formerReplacesStream: boolean) {
  const store = new ReplicaStore({ incarnation: "a-1", shards: () => 4, rowEpoch: () => null, createSink: () => new ImageSink() });
  const promoter = new ReplicaPromoter({ store, serverId: "a", incarnation: "a-1", logger: pino({ level: "silent" }), formerReplacesStream });
  // b adopted epoch 7 and resumed its replication to a: its snapshot at sequence 0.
  const takers: StreamIdentity = { shard: 3, epoch: 7, leaderId: "L", leaderIncarnation: "b-1", standbyIncarnation: "a-1", streamId: "b-stream" };
  store.receive({ kind: "snapshot", stream: takers, seq: 0, snapshot: { ns: "c5 holds ns/x" } });
  // a's move statement then failed, its outcome unknown: it keeps the table it handed over for epoch 7.
  const kept = promoter.keepFormerTable({ shard: 3, epoch: 7, leaderId: "L", leaderIncarnation: "b-1" }, { ns: "c5 holds ns/x" });
  return { store, kept, takers };
}

describe("a balance hand-over's former leader that hears its move statement's outcome late", () => {
  it("keeps the taker's stream of the new epoch, so the taker's next entries are taken", () => {
    const { store, kept, takers } = takerStreamThenFormerKept(false);
    expect(kept).toBe(true);
    expect(store.get(3)?.stream.streamId).toBe("b-stream");
    expect(store.receive({ kind: "entries", stream: takers, fromSeq: 0, entries: [{ grant: "c6" }] })).toEqual({ ackedSeq: 1 });
  });

  it("negative control (former-replaces-taker-stream): the table kept replaces the taker's stream, and its next entries are refused", () => {
    const { store, takers } = takerStreamThenFormerKept(true);
    expect(store.get(3)?.stream.streamId).not.toBe("b-stream");
    expect(() => store.receive({ kind: "entries", stream: takers, fromSeq: 0, entries: [{ grant: "c6" }] })).toThrow(/NEEDS_SNAPSHOT|holds no snapshot/);
  });
});
