import { describe, expect, it } from "vitest";
import { chooseTaker } from "../../../src/cluster/replication/choose-taker.js";

const ready = (...ids: string[]) => ids.map((serverId) => ({ serverId, ready: true }));
/** Rows led as `holders` says, one per shard. */
const rows = (...holders: (string | null)[]) => holders.map((holder) => ({ holder, expired: holder === null }));

describe("chooseTaker: which member a balance move hands a shard to", () => {
  it("the member short of its share; the plan's surplus shard when no standby is in sync on it", () => {
    const move = chooseTaker({ serverId: "a", members: ready("a", "b"), leases: rows("a", "a", "a", "a"), led: [0, 1, 2, 3].map((shard) => ({ shard, inSyncStandby: null })), surplus: 3 });
    expect(move).toEqual({ shard: 3, taker: "b" });
  });

  it("a shard whose standby is already in sync on a short member moves first (no snapshot to wait for)", () => {
    const led = [
      { shard: 0, inSyncStandby: "c" },
      { shard: 1, inSyncStandby: "b" },
      { shard: 2, inSyncStandby: "c" },
    ];
    // a leads 3 of 4, b leads 1 (its share is 1), c leads none (short): shard 2 or 0 moves to c.
    const move = chooseTaker({ serverId: "a", members: ready("a", "b", "c"), leases: rows("a", "a", "a", "b"), led, surplus: 1 });
    expect(move).toEqual({ shard: 2, taker: "c" });
  });

  it("among short members, the one leading the fewest (ties to the lowest id); members in their join wait never take", () => {
    const members = [...ready("a", "b", "c"), { serverId: "d", ready: false }];
    const leases = rows("a", "a", "a", "a", "a", "c", "b", "b", "a");
    const move = chooseTaker({ serverId: "a", members, leases, led: [{ shard: 8, inSyncStandby: null }], surplus: 8 });
    expect(move).toEqual({ shard: 8, taker: "c" });
  });

  it("nobody short of its share: no move", () => {
    expect(chooseTaker({ serverId: "a", members: ready("a", "b"), leases: rows("a", "a", "b", "b"), led: [{ shard: 1, inSyncStandby: "b" }], surplus: 1 })).toBeNull();
  });
});
