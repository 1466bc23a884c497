import { describe, expect, it } from "vitest";
import type { LiveMember } from "../../../src/cluster/coordinator.js";
import { chooseStandbys, standbyGone } from "../../../src/cluster/replication/choose-standbys.js";

const ready = (...ids: string[]): LiveMember[] => ids.map((serverId) => ({ serverId, ready: true }));
const rows = (standbys: (string | null)[]) => standbys.map((standbyId, shard) => ({ shard, standbyId }));

describe("chooseStandbys", () => {
  it("never chooses the leader, and answers null when no other ready member exists", () => {
    const members = [...ready("a"), { serverId: "b", ready: false }];
    expect(chooseStandbys({ leader: "a", members, leases: rows([null, null]), shards: [0, 1] })).toEqual(new Map([[0, null], [1, null]]));
  });

  it("spreads standbys evenly: the members with the fewest standbys first, counting its own choices as it makes them", () => {
    const members = ready("a", "b", "c", "d");
    // b already stands by for 2 shards, c for 1, d for none.
    const leases = rows(["b", "b", "c", null, null, null, null]);
    const chosen = chooseStandbys({ leader: "a", members, leases, shards: [3, 4, 5, 6] });
    const counts = new Map<string, number>([["b", 2], ["c", 1], ["d", 0]]);
    for (const id of chosen.values()) counts.set(id!, counts.get(id!)! + 1);
    expect([...chosen.values()]).not.toContain("a");
    // 7 standbys over 3 members: 3, 2, 2 (never more than one apart).
    expect([...counts.values()].sort()).toEqual([2, 2, 3]);
    expect(chosen.get(3)).toBe("d");
  });

  it("re-choosing a shard does not count its old standby against that member", () => {
    const members = ready("a", "b", "c");
    const chosen = chooseStandbys({ leader: "a", members, leases: rows(["b", "c"]), shards: [0] });
    expect(chosen.get(0)).toBe("b");
  });

  it("leaders choosing at once from the same rows spread ties by shard", () => {
    const members = ready("a", "b", "c", "d");
    const picks = [0, 1, 2].map((shard) => chooseStandbys({ leader: "a", members, leases: rows([null, null, null]), shards: [shard] }).get(shard));
    expect(new Set(picks).size).toBe(3);
  });

  it("standbyGone: none named, or the named one is not a live ready member", () => {
    const members = [...ready("a", "b"), { serverId: "c", ready: false }];
    expect(standbyGone({ standbyId: null }, members)).toBe(true);
    expect(standbyGone({ standbyId: "b" }, members)).toBe(false);
    expect(standbyGone({ standbyId: "c" }, members)).toBe(true);
    expect(standbyGone({ standbyId: "z" }, members)).toBe(true);
  });
});
