import pg from "pg";
import { describe, expect, it } from "vitest";
import type { Coordinator, LeaseClaim } from "../../src/cluster/coordinator.js";
import type { CoordinatorEvent } from "../../src/cluster/postgres/coordinator-event.js";
import { createPostgresCoordinator } from "../../src/cluster/postgres/postgres-coordinator.js";
import { sleep } from "../support/wait-for.js";
import { schemaPerTest, type Closable } from "./pg-schema.js";

const claim = (serverId: string, leaderLeaseMs: number): LeaseClaim => ({
  serverId,
  incarnation: `${serverId}-1`,
  url: `http://${serverId}.invalid`,
  leaderId: `${serverId}-term`,
  leaderLeaseMs,
  lockLeaseMs: 100,
  validForMs: 50,
});

describe("the fenced bound extension against a concurrent takeover (FOR SHARE of the lease row)", () => {
  const bed = schemaPerTest<Closable>();

  it("an old leader's extension stalled behind a row lock while its lease expires: the new leader's acquisition waits for it, and no old-epoch extension commits after the new epoch", async () => {
    const events: CoordinatorEvent[] = [];
    const coordinator = (): Coordinator => {
      const c = createPostgresCoordinator({ connectionString: bed.schema.connectionString, statementTimeoutMs: 10_000, onCommitted: (e) => events.push(e) });
      bed.open.push(c);
      return c;
    };
    const oldLeader = coordinator();
    const newLeader = coordinator();
    await oldLeader.start(1);
    const old = (await oldLeader.acquire(0, 0, claim("old", 400)))!;
    expect(await oldLeader.extendBound("ns", old, 0, 1_000)).toBe(true);

    // Stall the old leader's next extension on the bounds row (after its fence read the lease row).
    const blocker = new pg.Client({ connectionString: bed.schema.connectionString });
    await blocker.connect();
    bed.open.push({ close: () => blocker.end() });
    await blocker.query("BEGIN");
    await blocker.query("SELECT 1 FROM bounds WHERE namespace = 'ns' FOR UPDATE");
    const settled: string[] = [];
    const stalled = oldLeader.extendBound("ns", old, 1_000, 2_000).then((ok) => {
      settled.push("old extension");
      return ok;
    });
    const deadline = Date.now() + 5_000;
    while ((await bed.schema.query("SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE 'UPDATE bounds%'")).length === 0) {
      if (Date.now() > deadline) throw new Error("the old extension never blocked on the row lock");
      await sleep(10);
    }

    // The old lease expires; a new leader's acquisition starts.
    let row = (await newLeader.readLeases())[0]!;
    while (!row.expired) {
      await sleep(20);
      row = (await newLeader.readLeases())[0]!;
    }
    const acquisition = newLeader.acquire(0, row.version, claim("new", 60_000)).then((term) => {
      settled.push("acquisition");
      return term;
    });
    await sleep(300);
    // The acquisition must not finish while the old extension is still in flight.
    expect(settled).toEqual([]);

    await blocker.query("COMMIT");
    const [extended, term] = await Promise.all([stalled, acquisition]);
    expect(settled).toEqual(["old extension", "acquisition"]);
    expect(extended).toBe(true);
    expect(term?.epoch).toBe(2);
    // By the database's clock: every extension of epoch 1 committed before epoch 2 was acquired,
    // so the new leader's term reads a bound above everything the old one may hand out.
    const acquired = events.find((e) => e.kind === "acquisition" && e.epoch === 2)!;
    const late = events.filter((e) => e.kind === "bound extension" && e.epoch === 1 && e.dbTimeUs >= acquired.dbTimeUs);
    expect(late).toEqual([]);
    expect(await newLeader.readBound("ns")).toEqual({ bound: 2_000, immutable: null, epoch: 1 });
  });
});
