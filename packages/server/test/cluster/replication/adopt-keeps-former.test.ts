import pino from "pino";
import { describe, expect, it } from "vitest";
import type { LeaseClaim, MemberInfo } from "../../../src/cluster/coordinator.js";
import { MemoryStore } from "../../../src/cluster/memory/memory-store.js";
import { ReplicaPromoter } from "../../../src/cluster/replication/promote-replica.js";
import { ReplicaStore } from "../../../src/cluster/replication/replica-store.js";
import { settle } from "./fake-replication-clock.js";
import { ImageSink } from "./promotion-fixture.js";
import { LATE_MS, setup } from "./shard-replication-fixture.js";

/**
 * pnpm sim seeds 1352, 2226, 2731, 50247, 51876 and 53870 (a held lock lost through one failure
 * of a protected cluster): a balance move handed shard 3 to a taker whose adoption statement
 * committed, and then the taker crashed, paused or lost its database before it renewed. The
 * adoption had cleared the row's standby (the former leader, holding the table as handed over),
 * so the expired row was taken empty. The adoption must leave the former named in sync, and the
 * taker's replication resume to it (no new naming, which would record `in_sync = false`) before
 * it answers anything.
 */

const LEADER_LEASE_MS = 1_000;
const a: MemberInfo = { serverId: "a", incarnation: "a-1", url: "http://a.invalid", ready: true };
const b: MemberInfo = { serverId: "b", incarnation: "b-1", url: "http://b.invalid", ready: true };
const claimOf = (m: MemberInfo, leaderId: string, withState: boolean): LeaseClaim => ({
  serverId: m.serverId,
  incarnation: m.incarnation,
  url: m.url,
  leaderId,
  leaderLeaseMs: LEADER_LEASE_MS,
  lockLeaseMs: 10_000,
  validForMs: 8_000,
  withState,
});

/** Member a leads shard 1 with b in sync, hands it to b for balance (keeping its table), and b adopts it; then b is never heard of again. */
function balanceMoveThenTakerFails(clearStandby: boolean) {
  let dbNow = 0;
  const store = new MemoryStore({ now: () => dbNow });
  store.start(4, 4);
  store.heartbeat(a, 10 * LEADER_LEASE_MS);
  store.heartbeat(b, 10 * LEADER_LEASE_MS);
  const got = store.acquire(1, store.readLeases()[1]!.version, claimOf(a, "L1", false))!;
  const termA = { shard: 1, epoch: got.epoch, serverId: "a", incarnation: "a-1" };
  expect(store.nameStandby(termA, b, 1)).toBe(true);
  expect(store.setInSync(termA, "b-1", true, 2)).toBe(true);
  const moved = store.handOver(termA, b, LEADER_LEASE_MS, true)!;
  // The former leader keeps the table it handed over (c1 holds a lock in it) as a replica of the new epoch.
  const replicas = new ReplicaStore({ incarnation: "a-1", shards: () => 4, rowEpoch: () => null, createSink: () => new ImageSink() });
  const promoter = new ReplicaPromoter({ store: replicas, serverId: "a", incarnation: "a-1", logger: pino({ level: "silent" }) });
  expect(promoter.keepFormerTable({ shard: 1, epoch: moved.epoch, leaderId: "L1", leaderIncarnation: "b-1" }, { ns: "c1 holds ns/x" })).toBe(true);
  dbNow += 5;
  const adopted = store.adoptHandOver(1, moved.epoch, claimOf(b, "L1", true), undefined, clearStandby);
  expect(adopted).not.toBeNull();
  // The taker crashed (or paused, or lost its database) right after: it never renews.
  dbNow += LEADER_LEASE_MS + 1;
  const row = store.readLeases()[1]!;
  expect(row.expired).toBe(true);
  return { store, promoter, row, adopted: adopted! };
}

describe("a balance move's taker that fails right after adopting", () => {
  it("leaves the shard to the former leader's takeover with every lock: the adoption kept it named in sync", () => {
    const { store, promoter, row, adopted } = balanceMoveThenTakerFails(false);
    expect(adopted.standby).toEqual({ serverId: "a", incarnation: "a-1" });
    expect(row).toMatchObject({ holder: "b", standbyId: "a", standbyIncarnation: "a-1", inSync: true });
    const candidate = promoter.forTakeover(row);
    expect(candidate).toEqual({ shard: 1, epoch: row.epoch, leaderId: "L1" });
    // The takeover's statement is fenced by the same standby conditions, and matches.
    expect(store.acquire(1, row.version, claimOf(a, "L1", true))).not.toBeNull();
    expect(promoter.settle(candidate!, "matched")?.namespaces).toEqual({ ns: "c1 holds ns/x" });
  });

  it("negative control (adopt-clears-former): an adoption that clears the former leaves the row to be taken empty", () => {
    const { promoter, row, adopted } = balanceMoveThenTakerFails(true);
    expect(adopted.standby).toBeNull();
    expect(row).toMatchObject({ standbyId: null, inSync: false });
    expect(promoter.forTakeover(row)).toBeNull();
  });
});

describe("ShardReplication.resume: the taker streams to the former the row still names in sync", () => {
  it("names nobody again (the row stays in sync throughout), and answers a grant only once the former acknowledged it", async () => {
    const s = setup();
    s.coordinator.row = { ...s.coordinator.row, standby: { serverId: "standby", incarnation: "standby-1" }, inSync: true, round: 0 };
    s.replication.resume(s.standby().target);
    expect(s.replication.rule.state).toBe("joining");
    const seq = s.grant("c2 granted ns/y");
    let answered: string | null = null;
    void s.replication.whenAcked(seq).then((outcome) => (answered = outcome));
    await s.clock.endTurn();
    await settle();
    expect(answered).toBe("acked");
    expect(s.standby().items()).toEqual(["held-before", "c2 granted ns/y"]);
    await s.clock.advance(1);
    expect(s.replication.rule.state).toBe("in-sync");
    expect(s.coordinator.writes).toEqual(["in_sync=true"]);
    expect(s.coordinator.row.inSync).toBe(true);
  });

  it("records a former that does not answer not in sync before the grant is answered, as for any late standby", async () => {
    const s = setup();
    s.coordinator.row = { ...s.coordinator.row, standby: { serverId: "standby", incarnation: "standby-1" }, inSync: true, round: 0 };
    s.standby().paused = true;
    s.replication.resume(s.standby().target);
    const seq = s.grant("c2 granted ns/y");
    const seen: string[] = [];
    void s.replication.whenAcked(seq).then((outcome) => seen.push(`answered ${outcome} with in_sync=${String(s.coordinator.row.inSync)}`));
    await s.clock.endTurn();
    await s.clock.advance(LATE_MS - 1);
    expect(seen).toEqual([]);
    await s.clock.advance(1);
    await settle();
    expect(seen).toEqual(["answered unreplicated with in_sync=false"]);
    expect(s.coordinator.writes).toEqual(["in_sync=false"]);
  });

  it("with no reachable former, records not in sync before anything is answered", async () => {
    const s = setup();
    s.coordinator.row = { ...s.coordinator.row, standby: { serverId: "standby", incarnation: "standby-1" }, inSync: true, round: 0 };
    s.replication.resume(null);
    const seq = s.grant("c2 granted ns/y");
    const pending = s.replication.pendingAck(seq);
    expect(pending).not.toBeNull();
    const outcome = await pending!;
    expect(outcome).toBe("unreplicated");
    expect(s.coordinator.row.inSync).toBe(false);
    expect(s.replication.rule.state).toBe("out");
  });
});
