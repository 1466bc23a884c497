import { describe, expect, it } from "vitest";
import { syncStandby, type SyncStandbyOptions } from "../../../src/cluster/replication/sync-standby.js";
import { settle } from "./fake-replication-clock.js";
import { setup, Standby } from "./shard-replication-fixture.js";

/** Options with short real-time polling; the rule itself runs on the fixture's fake clock. */
function options(over: Partial<SyncStandbyOptions>): SyncStandbyOptions {
  return { taker: null, choose: () => Promise.resolve(null), deadlineMs: 2_000, pollMs: 1, retryMs: 5, alive: () => true, ...over };
}

describe("syncStandby: an in-sync standby before a hand-over", () => {
  it("with none, names the member chosen, which takes the snapshot; answers it once the row says in sync", async () => {
    const s = setup();
    const chosen = s.standby().target;
    const got = await syncStandby(s.replication, options({ choose: () => Promise.resolve(chosen) }));
    expect(got).toEqual(chosen);
    expect(s.coordinator.row).toMatchObject({ standby: { incarnation: "standby-1" }, inSync: true });
    expect(s.standby().items()).toEqual(s.table);
  });

  it("already in sync: answers that standby without a write", async () => {
    const s = setup();
    await s.replication.attach(s.standby().target);
    await settle();
    const writes = s.coordinator.writes.length;
    expect(await syncStandby(s.replication, options({}))).toEqual(s.standby().target);
    expect(s.coordinator.writes.length).toBe(writes);
  });

  /**
   * Seed 26958: a balance move of a shard whose in-sync standby was another member than the taker
   * recorded it not in sync first, to name the taker; the leader crashed as that write went out,
   * and with the row naming no in-sync standby the shard was taken empty, its locks lost. The
   * standby moves to the taker instead, the current one named in sync until the taker holds the
   * snapshot: the row names an in-sync standby holding every grant at every write.
   */
  it("a taker other than the in-sync standby: the standby moves to it, never a moment unprotected", async () => {
    const taker = new Standby("taker-1", "taker");
    const s = setup([taker]);
    await s.replication.attach(s.standby().target);
    await settle();
    s.grant("g1");
    await s.clock.endTurn();
    const writes = s.coordinator.writes.length;
    const got = await syncStandby(s.replication, options({ taker: taker.target }));
    expect(got).toEqual(taker.target);
    expect(s.coordinator.writes.slice(writes)).toEqual(["move standby-1->taker-1"]);
    expect(s.coordinator.row).toMatchObject({ standby: { incarnation: "taker-1" }, inSync: true });
    expect(taker.items()).toEqual(s.table);
  });

  it("TEST ONLY (balance-sync-unprotected): the row records not in sync first, then the taker is named and synced", async () => {
    const taker = new Standby("taker-1", "taker");
    const s = setup([taker]);
    await s.replication.attach(s.standby().target);
    await settle();
    s.grant("g1");
    await s.clock.endTurn();
    const writes = s.coordinator.writes.length;
    const got = await syncStandby(s.replication, options({ taker: taker.target, unprotectedTakerSync: true }));
    expect(got).toEqual(taker.target);
    expect(s.coordinator.writes.slice(writes)).toEqual(["in_sync=false", "name taker-1", "in_sync=true"]);
    expect(s.coordinator.row).toMatchObject({ standby: { incarnation: "taker-1" }, inSync: true });
    expect(taker.items()).toEqual(s.table);
  });

  it("no member to name: null at the deadline, the choice asked at most once per retry pause", async () => {
    const s = setup();
    let asked = 0;
    const got = await syncStandby(s.replication, options({ deadlineMs: 60, retryMs: 20, choose: () => (asked++, Promise.resolve(null)) }));
    expect(got).toBeNull();
    expect(asked).toBeGreaterThanOrEqual(1);
    expect(asked).toBeLessThanOrEqual(4);
    expect(s.coordinator.row.inSync).toBe(false);
  });

  it("a standby that never acknowledges its snapshot: null at the deadline", async () => {
    const s = setup();
    s.standby().paused = true;
    expect(await syncStandby(s.replication, options({ deadlineMs: 50, choose: () => Promise.resolve(s.standby().target) }))).toBeNull();
    expect(s.coordinator.row.inSync).toBe(false);
  });

  it("the term stopped serving: null at once, nothing named", async () => {
    const s = setup();
    expect(await syncStandby(s.replication, options({ alive: () => false, choose: () => Promise.resolve(s.standby().target) }))).toBeNull();
    expect(s.coordinator.writes).toEqual([]);
  });
});
