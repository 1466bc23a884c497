import { describe, expect, it } from "vitest";
import type { Coordinator, MemberInfo } from "../../src/cluster/coordinator.js";
import { createPostgresCoordinator } from "../../src/cluster/postgres/postgres-coordinator.js";
import { schemaPerTest } from "./pg-schema.js";

const member = (incarnation: string, serverId = "dup"): MemberInfo => ({ serverId, incarnation, url: `http://${incarnation}`, ready: true });

describe("PostgresCoordinator: incarnations (two processes with one server id)", () => {
  const bed = schemaPerTest<Coordinator>();
  const coordinator = (): Coordinator => {
    const c = createPostgresCoordinator({ connectionString: bed.schema.connectionString });
    bed.open.push(c);
    return c;
  };

  it("a heartbeat never takes over the member row of another live incarnation: the newcomer is missing from the answer until that heartbeat lapses", async () => {
    const first = coordinator();
    const second = coordinator();
    await first.start(2);
    expect(await first.heartbeat(member("one"), 300)).toEqual([{ serverId: "dup", incarnation: "one", ready: true, url: "http://one" }]);
    // The second process with the same id: its row is not written, and it is not in the answer.
    expect(await second.heartbeat(member("two"), 300)).toEqual([]);
    expect(await bed.schema.query("SELECT server_id, incarnation, url FROM members")).toEqual([{ server_id: "dup", incarnation: "one", url: "http://one" }]);
    // The first keeps its row; a third server sees one member "dup".
    expect(await first.heartbeat(member("one"), 300)).toEqual([{ serverId: "dup", incarnation: "one", ready: true, url: "http://one" }]);
    expect(await second.heartbeat(member("other", "b"), 300)).toEqual([
      { serverId: "b", incarnation: "other", ready: true, url: "http://other" },
      { serverId: "dup", incarnation: "one", ready: true, url: "http://one" },
    ]);
    // Its leave deletes nothing of the first's.
    await second.leave({ serverId: "dup", incarnation: "two" });
    expect(await bed.schema.query("SELECT incarnation FROM members WHERE server_id = 'dup'")).toEqual([{ incarnation: "one" }]);
    // Once the first's heartbeat is older than the lapse, the newcomer takes the row over.
    await new Promise((r) => setTimeout(r, 350));
    expect(await second.heartbeat(member("two"), 300)).toEqual([{ serverId: "dup", incarnation: "two", ready: true, url: "http://two" }]);
    // Now the first is the one left out (it must stop leading), and its leave deletes nothing.
    expect(await first.heartbeat(member("one"), 300)).toEqual([]);
    await first.leave({ serverId: "dup", incarnation: "one" });
    expect(await bed.schema.query("SELECT incarnation FROM members WHERE server_id = 'dup'")).toEqual([{ incarnation: "two" }]);
    await second.leave({ serverId: "dup", incarnation: "two" });
    expect(await bed.schema.query("SELECT server_id FROM members WHERE server_id = 'dup'")).toEqual([]);
  });

  it("lease rows keep the acquiring incarnation; a release clears it", async () => {
    const a = coordinator();
    await a.start(1);
    const term = (await a.acquire(0, 0, { serverId: "dup", incarnation: "one", url: "http://one", leaderId: "t1", leaderLeaseMs: 60_000, lockLeaseMs: 100, validForMs: 50 }))!;
    expect((await a.readLeases())[0]).toMatchObject({ holder: "dup", incarnation: "one", leaderId: "t1" });
    await a.release("dup", [term]);
    expect((await a.readLeases())[0]).toMatchObject({ holder: null, incarnation: null, leaderId: null });
  });

  it("migrates tables of a version before incarnations in place: the columns are added, the rows kept", async () => {
    const a = coordinator();
    await a.start(2);
    await a.heartbeat(member("one"), 5_000);
    await a.acquire(1, 0, { serverId: "dup", incarnation: "one", url: "http://one", leaderId: "t1", leaderLeaseMs: 60_000, lockLeaseMs: 100, validForMs: 50 });
    await bed.schema.query("ALTER TABLE members DROP COLUMN incarnation");
    await bed.schema.query("ALTER TABLE leases DROP COLUMN incarnation");
    // A newer server starts on the old tables: it adds the columns (NULL in existing rows).
    expect(await coordinator().start(undefined)).toBe(2);
    expect(await bed.schema.query("SELECT server_id, incarnation FROM members")).toEqual([{ server_id: "dup", incarnation: null }]);
    expect((await a.readLeases()).map((l) => [l.holder, l.incarnation, l.epoch])).toEqual([
      [null, null, 0],
      ["dup", null, 1],
    ]);
    // A row written by the older version (no incarnation) is taken over by the first heartbeat.
    expect(await a.heartbeat(member("two"), 5_000)).toEqual([{ serverId: "dup", incarnation: "two", ready: true, url: "http://two" }]);
  });
});
