import { describe, expect, it } from "vitest";
import type { Coordinator, HeldTerm } from "../../src/cluster/coordinator.js";
import { createPostgresCoordinator } from "../../src/cluster/postgres/postgres-coordinator.js";
import { claim, member } from "./claims.js";
import { schemaPerTest } from "./pg-schema.js";

describe("PostgresCoordinator: a term's bounds loaded in one statement (loadBounds, and with the adoption of a hand-over)", () => {
  const bed = schemaPerTest<Coordinator>();
  const coordinator = (unfencedBoundExtensions = false): Coordinator => {
    const c = createPostgresCoordinator({ connectionString: bed.schema.connectionString, unfencedBoundExtensions });
    bed.open.push(c);
    return c;
  };
  type BoundRow = { namespace: string; bound: string; immutable: string | null; epoch: string };
  const bounds = async (): Promise<BoundRow[]> => bed.schema.query<BoundRow>("SELECT namespace, bound, immutable, epoch FROM bounds ORDER BY namespace");

  /** "a" leads shard 0 at epoch 1 (lease `leaseMs`) and stored ns1's bound at 1,000 (immutable 1). */
  async function led(c: Coordinator, leaseMs = 60_000): Promise<HeldTerm> {
    await c.start(1);
    const term = (await c.acquire(0, 0, claim("a", leaseMs)))!;
    expect(await c.extendBound("ns1", term, 0, 1_000, 1)).toBe(true);
    return term;
  }

  /** "x" takes shard 0 once a's lease of 100 ms ran out: epoch 2. */
  async function depose(c: Coordinator): Promise<HeldTerm> {
    await new Promise((r) => setTimeout(r, 150));
    const seen = (await c.readLeases())[0]!;
    return (await c.acquire(0, seen.version, claim("x")))!;
  }

  it("reads and extends every namespace under the term's epoch, the stored one from its bound, a new one from 0", async () => {
    const c = coordinator();
    const term = await led(c);
    const loaded = await c.loadBounds(term, ["ns1", "ns2", "ns1"], 500);
    expect(loaded.sort((x, y) => x.namespace.localeCompare(y.namespace))).toEqual([
      { namespace: "ns1", floor: 1_000, immutable: 1, to: 1_500 },
      { namespace: "ns2", floor: 0, immutable: null, to: 500 },
    ]);
    // The immutable timestamp recorded as the lowest of the stored one and the old bound + 1.
    expect(await bounds()).toEqual([
      { namespace: "ns1", bound: "1500", immutable: "1", epoch: "1" },
      { namespace: "ns2", bound: "500", immutable: "1", epoch: "1" },
    ]);
  });

  it("a deposed term loads nothing (the epoch fence); control: without the fence (LEASEHOLD_TEST_BREAK=epoch-fence) the same statement extends", async () => {
    const c = coordinator();
    const old = await led(c, 100);
    const x = await depose(c);
    expect(await c.extendBound("ns1", x, 1_000, 3_000)).toBe(true);
    const before = await bounds();
    expect(await c.loadBounds(old, ["ns1", "ns2"], 500)).toEqual([]);
    expect(await bounds()).toEqual(before);

    // Control: the break drops the epoch from the fence. The deposed term then stores ns2 under
    // its old epoch; ns1, extended by epoch 2, is still left alone (a later epoch's row).
    const unfenced = coordinator(true);
    expect(await unfenced.loadBounds(old, ["ns1", "ns2"], 500)).toEqual([{ namespace: "ns2", floor: 0, immutable: null, to: 500 }]);
    expect((await bounds()).find((b) => b.namespace === "ns1")).toEqual(before.find((b) => b.namespace === "ns1"));
  });

  it("the adoption of a hand-over loads the bounds asked for in its statement, under the new epoch; an adoption that matches nothing loads nothing", async () => {
    const c = coordinator();
    const term = await led(c);
    const leader = { ...term, serverId: "a", incarnation: "a-inc" };
    await c.heartbeat({ serverId: "b", incarnation: "b-inc", url: "http://b.invalid:8080", ready: true }, 60_000);
    expect(await c.nameStandby(leader, member("b"), 1)).toBe(true);
    expect(await c.setInSync(leader, "b-inc", true, 2)).toBe(true);
    const moved = (await c.handOver(leader, member("b"), 60_000))!;
    const asB = { ...claim("b"), leaderId: "a-term" };
    const before = await bounds();
    expect(await c.adoptHandOver(0, moved.epoch, { ...asB, incarnation: "b-restarted" }, { namespaces: ["ns1", "ns2"], block: 100 })).toBeNull();
    expect(await bounds()).toEqual(before);

    const adopted = (await c.adoptHandOver(0, moved.epoch, asB, { namespaces: ["ns1", "ns2"], block: 100 }))!;
    expect(adopted.epoch).toBe(moved.epoch);
    expect([...adopted.bounds].sort((x, y) => x.namespace.localeCompare(y.namespace))).toEqual([
      { namespace: "ns1", floor: 1_000, immutable: 1, to: 1_100 },
      { namespace: "ns2", floor: 0, immutable: null, to: 100 },
    ]);
    expect(await bounds()).toEqual([
      { namespace: "ns1", bound: "1100", immutable: "1", epoch: String(moved.epoch) },
      { namespace: "ns2", bound: "100", immutable: "1", epoch: String(moved.epoch) },
    ]);
    // The term's own extensions go on from there, fenced by its epoch.
    expect(await c.extendBound("ns1", adopted, 1_100, 2_000)).toBe(true);
  });
});
