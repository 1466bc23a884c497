import { describe, expect, it } from "vitest";
import type { AcquiredTerm, Coordinator, LeaseClaim } from "../../src/cluster/coordinator.js";
import { createPostgresCoordinator } from "../../src/cluster/postgres/postgres-coordinator.js";
import { schemaPerTest } from "./pg-schema.js";

// The lease-wait record of a shard's row (PROTOCOL.md "Leases across failover"): a new leader waits
// the longest validForMs answered by the leaders whose leases a client may still believe, never
// the server-side lock lease; the record is kept (GREATEST) across leaders until one has waited it
// out, and tables of an older version, which recorded only lock_lease_ms, are migrated safely.

const claim = (serverId: string, validForMs: number, lockLeaseMs = validForMs * 4): LeaseClaim => ({
  serverId,
  incarnation: `${serverId}-incarnation`,
  url: `http://${serverId}.invalid`,
  leaderId: `${serverId}-term`,
  leaderLeaseMs: 60_000,
  lockLeaseMs,
  validForMs,
});

describe("PostgresCoordinator: the lease-wait record", () => {
  const bed = schemaPerTest<Coordinator>();
  const coordinator = (): Coordinator => {
    const c = createPostgresCoordinator({ connectionString: bed.schema.connectionString });
    bed.open.push(c);
    return c;
  };
  const record = async (shard = 0): Promise<{ valid_for_ms: number; valid_for_epoch: string | null; lock_lease_ms: number; epoch: string }> =>
    (await bed.schema.query<{ valid_for_ms: number; valid_for_epoch: string | null; lock_lease_ms: number; epoch: string }>(
      "SELECT valid_for_ms, valid_for_epoch, lock_lease_ms, epoch FROM leases WHERE shard = $1",
      [shard],
    ))[0]!;
  /** Take shard 0 at the version it has now, then give it up again (a hand-over: another leader may take it at once). */
  const leadAndRelease = async (c: Coordinator, who: LeaseClaim): Promise<AcquiredTerm> => {
    const row = (await c.readLeases())[0]!;
    const term = await c.acquire(0, row.version, who);
    if (term === null) throw new Error(`${who.serverId} could not take shard 0`);
    await c.release(who.serverId, [term]);
    return term;
  };

  it("a new leader waits the longest validForMs of the leaders before it (not their lock lease), recorded by each acquisition before it serves", async () => {
    const c = coordinator();
    await c.start(1);
    // Never led: no wait. The acquisition records its own validForMs at once.
    const a = await leadAndRelease(c, claim("a", 1_000, 4_000));
    expect(a.lockDelayMs).toBe(0);
    expect(await record()).toMatchObject({ valid_for_ms: 1_000, valid_for_epoch: String(a.epoch) });
    // b waits a's 1,000 (not its lock lease of 4,000) and records GREATEST(1,000, its 300).
    const b = await leadAndRelease(c, claim("b", 300));
    expect(b.lockDelayMs).toBe(1_000);
    expect(await record()).toMatchObject({ valid_for_ms: 1_000, valid_for_epoch: String(b.epoch) });
    // b never waited a out (it did not settle): a's leases may still be believed, so c waits them too.
    const third = await leadAndRelease(c, claim("c", 200));
    expect(third.lockDelayMs).toBe(1_000);
  });

  it("a leader that waited its predecessors out lowers the record to its own; a settle of an earlier term matches nothing", async () => {
    const c = coordinator();
    await c.start(1);
    await leadAndRelease(c, claim("a", 2_000));
    const row = (await c.readLeases())[0]!;
    const b = (await c.acquire(0, row.version, claim("b", 500)))!;
    expect(b.lockDelayMs).toBe(2_000);
    const versionBefore = (await c.readLeases())[0]!.version;
    expect(await c.settleLeaseWait(b, 500)).toBe(true);
    expect(await record()).toMatchObject({ valid_for_ms: 500, valid_for_epoch: String(b.epoch) });
    // The settle says nothing about b being alive: the row's version (what takers watch) is unchanged.
    expect((await c.readLeases())[0]!.version).toBe(versionBefore);
    await c.release("b", [b]);
    const next = await leadAndRelease(c, claim("c", 100));
    expect(next.lockDelayMs).toBe(500);
    // A late settle of b's term (after c's acquisition raised the record to cover c) changes nothing.
    expect(await c.settleLeaseWait(b, 1)).toBe(false);
    expect((await record()).valid_for_ms).toBe(500);
  });

  it("migrates a table of an older version: the new columns are added, and a term that recorded only its lock lease is waited out in full", async () => {
    const c = coordinator();
    await c.start(1);
    // The older version's table: no valid_for columns; its leader (lock lease 600) led epoch 1.
    await bed.schema.query("ALTER TABLE leases DROP COLUMN valid_for_ms, DROP COLUMN valid_for_epoch");
    await bed.schema.query("UPDATE leases SET epoch = 1, version = 1, lock_lease_ms = 600 WHERE shard = 0");
    const upgraded = coordinator();
    expect(await upgraded.start(1)).toBe(1);
    expect(await record()).toMatchObject({ valid_for_ms: 0, valid_for_epoch: null, lock_lease_ms: 600 });
    // The older term recorded no validForMs: its lock lease is waited out.
    const first = await leadAndRelease(upgraded, claim("new", 700, 1_400));
    expect(first.lockDelayMs).toBe(600);
    expect(await record()).toMatchObject({ valid_for_ms: 700, lock_lease_ms: 1_400 });
    // A rolling upgrade: an older-version server takes the shard next (the effect of its
    // statement: epoch + 1, GREATEST on lock_lease_ms only; it waits 1,400, covering "new"), then a new one.
    await bed.schema.query("UPDATE leases SET epoch = epoch + 1, version = version + 1, lock_lease_ms = GREATEST(lock_lease_ms, 3000) WHERE shard = 0");
    const afterOld = await leadAndRelease(upgraded, claim("new-2", 100));
    // The record (700) does not cover the older term (valid_for_epoch is behind): its lock lease counts.
    expect(afterOld.lockDelayMs).toBe(3_000);
  });
});
