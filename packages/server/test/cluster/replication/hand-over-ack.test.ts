import pino from "pino";
import { describe, expect, it } from "vitest";
import { awaitHandOverAck } from "../../../src/cluster/replication/hand-over.js";
import { HAND_OVER_ENTRY, ShardReplicaSink } from "../../../src/cluster/replication/replicated-tables.js";
import { InMemoryLockService } from "../../../src/service/in-memory-lock-service.js";
import { settle } from "./fake-replication-clock.js";
import { LATE_MS, setup } from "./shard-replication-fixture.js";

const context = (staleAck = false) => ({ leaderLeaseMs: 60_000, logger: pino({ level: "silent" }), where: { shard: 1 }, staleAck });

/** A leader whose standby holds (and acknowledged) every grant so far. */
async function inSync() {
  const s = setup();
  await s.replication.attach(s.standby().target);
  await settle();
  const acked = s.replication.whenAcked(s.grant("g1"));
  await s.clock.endTurn();
  expect(await acked).toBe("acked");
  expect(s.replication.rule.state).toBe("in-sync");
  return s;
}

describe("the hand-over completes only on a fresh acknowledgement of the hand-over entry (issue 29 item 3)", () => {
  it("a live standby acknowledges the hand-over entry, appended after everything else", async () => {
    const s = await inSync();
    const outcome = awaitHandOverAck(s.replication, context());
    await s.clock.endTurn();
    expect(await outcome).toBe("acked");
    expect(s.standby().items()).toEqual([...s.table, HAND_OVER_ENTRY]);
  });

  it("a standby that died after acknowledging the whole log never acknowledges it: the hand-over does not complete", async () => {
    const s = await inSync();
    // SIGKILL: it answers nothing more, though every entry so far was acknowledged.
    s.standby().paused = true;
    let outcome: string | undefined;
    void awaitHandOverAck(s.replication, context()).then((o) => (outcome = o));
    await s.clock.endTurn();
    await s.clock.advance(LATE_MS - 1);
    expect(outcome, "no acknowledgement: still waiting").toBeUndefined();
    // The rule records the standby late (a third of a leader lease), and the wait ends without it.
    await s.clock.advance(1);
    expect(outcome).toBe("unreplicated");
    expect(s.coordinator.row.inSync).toBe(false);
  });

  it("negative control (hand-over-stale-ack): the earlier cumulative acknowledgement counts, and a dead standby 'acknowledges' at once", async () => {
    const s = await inSync();
    s.standby().paused = true;
    const outcome = awaitHandOverAck(s.replication, context(true));
    expect(await outcome).toBe("acked");
  });

  it("a standby's replica table takes the hand-over entry as a no-op", () => {
    const table = new InMemoryLockService({ replica: true, leaderId: "L", serverId: "s", leaseMs: 10_000, logger: pino({ level: "silent" }) });
    const sink = new ShardReplicaSink(table);
    sink.restore({ namespaces: {} });
    expect(() => sink.apply(JSON.parse(JSON.stringify(HAND_OVER_ENTRY)))).not.toThrow();
    expect(() => sink.apply({ handOver: true, ns: "x" })).toThrow();
    void table.close();
  });
});
