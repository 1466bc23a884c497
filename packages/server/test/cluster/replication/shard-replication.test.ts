import { describe, expect, it } from "vitest";
import { settle } from "./fake-replication-clock.js";
import { LATE_MS, setup, term } from "./shard-replication-fixture.js";

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

  /** Probe every third of the lateness bound (the leader's cadence) for `ms`; answers the row's in_sync after each round. */
  async function probeFor(s: ReturnType<typeof setup>, ms: number): Promise<boolean[]> {
    const seen: boolean[] = [];
    for (let t = 0; t < ms; t += LATE_MS / 3) {
      s.replication.probe();
      await s.clock.advance(LATE_MS / 3);
      seen.push(s.coordinator.row.inSync);
    }
    return seen;
  }

  for (const how of ["dead", "paused"] as const) {
    it(`an idle shard's standby that is ${how === "dead" ? "gone (connections refused)" : "cut off (never answers)"}: probes find it within two lateness bounds and the row says not in sync; a live one stays in sync`, async () => {
      const s = setup();
      await s.replication.attach(s.standby().target);
      await settle();
      // Idle and answering: probes change nothing.
      expect(await probeFor(s, 3 * LATE_MS)).not.toContain(false);
      expect(s.coordinator.writes).toEqual(["name standby-1", "in_sync=true"]);
      s.standby()[how] = true;
      const seen = await probeFor(s, 2 * LATE_MS);
      expect(seen.at(-1)).toBe(false);
      expect(s.lost).toEqual(["not in sync"]);
      expect(s.coordinator.writes).toEqual(["name standby-1", "in_sync=true", "in_sync=false"]);
    });
  }

  it("a standby that is gone before it holds the snapshot is given up after a leader lease of probes, so another can be attached", async () => {
    const s = setup();
    s.standby().dead = true;
    expect(await s.replication.attach(s.standby().target)).toBe(true);
    await probeFor(s, 3 * LATE_MS - LATE_MS / 3);
    expect(s.replication.rule.state).toBe("joining");
    await probeFor(s, (2 * LATE_MS) / 3);
    expect(s.replication.rule.state).toBe("out");
    expect(s.lost).toEqual(["not in sync"]);
    expect(s.coordinator.writes).toEqual(["name standby-1", "in_sync=false"]);
  });
});
