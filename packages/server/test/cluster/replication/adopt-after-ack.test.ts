import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { ClusterMetrics } from "../../../src/cluster/cluster-metrics.js";
import { ClusterRuntime } from "../../../src/cluster/cluster-runtime.js";
import type { LeaseClaim, MemberInfo } from "../../../src/cluster/coordinator.js";
import { createMemoryCoordinator, type StatementLink } from "../../../src/cluster/memory/memory-coordinator.js";
import { MemoryStore } from "../../../src/cluster/memory/memory-store.js";
import type { ProcessClock } from "../../../src/cluster/process-clock.js";
import { ClusterKeyHolder } from "../../../src/cluster/replication/cluster-key-holder.js";
import { AdoptAfterAck } from "../../../src/cluster/replication/adopt-after-ack.js";
import { ReplicaPromoter } from "../../../src/cluster/replication/promote-replica.js";
import { ReplicaStore } from "../../../src/cluster/replication/replica-store.js";
import { HAND_OVER_ENTRY, ShardReplicaSink } from "../../../src/cluster/replication/replicated-tables.js";
import { ReplicationMetrics } from "../../../src/cluster/replication/replication-metrics.js";
import type { StreamIdentity } from "../../../src/cluster/replication/replication-wire.js";
import { createStandbySide } from "../../../src/cluster/replication/standby-side.js";
import type { TestBreak } from "../../../src/cluster/test-breaks.js";
import { InMemoryLockService } from "../../../src/service/in-memory-lock-service.js";
import { FakeReplicationClock } from "./fake-replication-clock.js";
import { grantedImage } from "./promotion-fixture.js";

/**
 * Found by `pnpm sim`, seed 50986: a SIGTERM handed shard 0 to its in-sync standby s3, alive with
 * the whole table (it acknowledged the hand-over entry). The NOTIFY of the row move was lost, and
 * so were the answers of s3's next two reads of the rows; a stop's hand-over clears the row's
 * standby, so no member leaves the row an extra lease, and s1 took it empty once it had expired
 * and been seen unchanged for a leader lease: every lock lost. A taker that acknowledged a final
 * hand-over entry must try the fenced adoption on its own, without its NOTIFY or a read of the rows.
 */

const LEADER_LEASE_MS = 1_000;
const logger = pino({ level: "silent" });

/** The simulated process's clocks: time moves only when the test advances it. */
class FakeProcessClock extends FakeReplicationClock implements ProcessClock {
  wall(): number {
    return 1_800_000_000_000 + this.t;
  }
}

const a: MemberInfo = { serverId: "a", incarnation: "a-1", url: "http://a.invalid", ready: true };
const claimOf = (m: MemberInfo, leaderId: string, leaderLeaseMs: number): LeaseClaim => ({
  serverId: m.serverId,
  incarnation: m.incarnation,
  url: m.url,
  leaderId,
  leaderLeaseMs,
  lockLeaseMs: 3_000,
  validForMs: 2_000,
  withState: false,
});

const runtimes: { runtime: ClusterRuntime; clock: FakeProcessClock }[] = [];
afterEach(async () => {
  for (const { runtime, clock } of runtimes.splice(0)) {
    const stopped = runtime.stop();
    await clock.advance(10 * LEADER_LEASE_MS);
    await stopped;
  }
});

/**
 * Member "b" (a real runtime over the in-memory database) is the in-sync standby of shard 0, which
 * "a" leads (leaderId L5) with a lock granted. a stops: it appends the hand-over entry, b
 * acknowledges it, and a moves the row to b, clearing its standby (a stop's hand-over). From the
 * acknowledgement on, b hears no NOTIFY and every read of the rows it sends loses its answer.
 */
async function stopHandOverUnheard(breaks: readonly TestBreak[]) {
  const clock = new FakeProcessClock();
  const db = new MemoryStore({ now: () => clock.t });
  let cut = false;
  const link: StatementLink = {
    run: (name, apply) =>
      Promise.resolve().then(() => {
        if (cut && name === "read-leases") throw new Error("simulated statement read-leases timed out (outcome unknown)");
        return apply();
      }),
    notify: (deliver) => {
      if (!cut) queueMicrotask(deliver);
    },
  };
  const runtime = new ClusterRuntime({
    coordinator: createMemoryCoordinator({ store: db, link }),
    shards: 1,
    serverId: "b",
    url: "http://b.invalid",
    leaderLeaseMs: LEADER_LEASE_MS,
    leaseMs: 3_000,
    reserveBlock: 1_000,
    logger,
    metrics: new ClusterMetrics(() => 0),
    breaks: new Set(breaks),
    time: clock,
    probe: async () => ({ answering: true }),
  });
  runtimes.push({ runtime, clock });
  await runtime.join(2_000);
  const incarnation = runtime.identity.incarnation;
  const key = new ClusterKeyHolder();
  key.set(Buffer.alloc(32, 1));
  const side = createStandbySide({
    serverId: "b",
    incarnation,
    shards: () => runtime.shards,
    leases: () => runtime.leases,
    key,
    logger,
    metrics: new ReplicationMetrics(() => []),
    leaseMs: 3_000,
    time: clock,
    onHandOverEntry: (shard: number) => runtime.handOverAcknowledged(shard),
  });
  runtime.promoter = new ReplicaPromoter({ store: side.store, serverId: "b", incarnation, logger });

  // a leads shard 0 (a long lease of its own: it stays a's until the hand-over), b its in-sync standby.
  db.heartbeat(a, 600_000);
  const got = db.acquire(0, db.readLeases()[0]!.version, claimOf(a, "L5", 600_000))!;
  const termA = { shard: 0, epoch: got.epoch, serverId: "a", incarnation: "a-1" };
  await runtime.start();
  await clock.advance(2 * LEADER_LEASE_MS);
  expect(db.nameStandby(termA, { serverId: "b", incarnation }, 1) && db.setInSync(termA, incarnation, true, 2)).toBe(true);
  const { images } = await grantedImage(3_000);
  const stream: StreamIdentity = { shard: 0, epoch: got.epoch, leaderId: "L5", leaderIncarnation: "a-1", standbyIncarnation: incarnation, streamId: "s1" };
  side.store.receive({ kind: "snapshot", stream, seq: 0, snapshot: { namespaces: images } });
  await clock.advance(LEADER_LEASE_MS);
  expect(runtime.terms[0]).toBeNull();

  // a's stop: the hand-over entry, acknowledged; then the row move (standby cleared), NOTIFY lost.
  cut = true;
  expect(side.store.receive({ kind: "entries", stream, fromSeq: 0, entries: [HAND_OVER_ENTRY] })).toEqual({ ackedSeq: 1 });
  const moved = db.handOver(termA, { serverId: "b", incarnation }, LEADER_LEASE_MS)!;
  expect(moved.epoch).toBe(got.epoch + 1);
  expect(db.readLeases()[0]).toMatchObject({ holder: "b", epoch: moved.epoch, standbyId: null, inSync: false });
  const movedAt = clock.t;
  return { runtime, db, clock, moved, movedAt };
}

describe("a taker that acknowledged a stop's hand-over entry, its NOTIFY and its reads of the rows lost", () => {
  it("adopts the row on its own, with the table, before the row expires (before any other member may take it)", async () => {
    const { runtime, db, clock, moved, movedAt } = await stopHandOverUnheard([]);
    await clock.advance(LEADER_LEASE_MS - 1);
    expect(clock.t - movedAt).toBeLessThan(LEADER_LEASE_MS);
    const term = runtime.terms[0];
    expect(term?.epoch).toBe(moved.epoch);
    expect(term?.carried?.tokens).toBe(1);
    expect(db.readLeases()[0]).toMatchObject({ holder: "b", epoch: moved.epoch, expired: false });
  });

  it("negative control (adopt-only-on-notify): the row is left unadopted until it expired, to be taken empty", async () => {
    const { runtime, db, clock, moved } = await stopHandOverUnheard(["adopt-only-on-notify"]);
    await clock.advance(LEADER_LEASE_MS + 1);
    expect(runtime.terms[0]).toBeNull();
    const row = db.readLeases()[0]!;
    expect(row).toMatchObject({ holder: "b", epoch: moved.epoch, expired: true });
    // Any other member now takes it (once it saw the row unchanged for a lease): empty, under a new leaderId.
    const c: MemberInfo = { serverId: "c", incarnation: "c-1", url: "http://c.invalid", ready: true };
    expect(db.acquire(0, row.version, claimOf(c, "L-new", LEADER_LEASE_MS))).not.toBeNull();
  });
});

describe("AdoptAfterAck: when the taker tries, and when it stops trying", () => {
  /** A host on a fake clock whose adoption answers `answers` in turn (then false); `awaits`/`busy` as the test sets them. */
  function host(answers: (boolean | null)[]) {
    const clock = new FakeProcessClock();
    const tried: number[] = [];
    const state = { awaits: true, busy: false };
    const follow = new AdoptAfterAck({
      now: () => clock.t,
      setTimer: (fn, ms) => clock.setTimer(fn, ms),
      awaits: () => state.awaits,
      busy: () => state.busy,
      adopt: async () => {
        tried.push(clock.t);
        return answers.length > 0 ? answers.shift()! : false;
      },
      intervalMs: 200,
      forMs: 1_000,
    });
    return { clock, tried, state, follow };
  }

  it("tries every interval for the given time after the acknowledgement, then gives up", async () => {
    const { clock, tried, follow } = host([]);
    follow.acknowledged(0);
    await clock.advance(3_000);
    expect(tried).toEqual([200, 400, 600, 800, 1_000]);
  });

  it("stops once adopted, or once nothing could be tried", async () => {
    for (const last of [true, null]) {
      const { clock, tried, follow } = host([false, last]);
      follow.acknowledged(0);
      await clock.advance(3_000);
      expect(tried).toEqual([200, 400]);
    }
  });

  it("skips a round while another claim of the shard is in flight, and stops once the shard no longer awaits adoption (led, stopping, or the leader appended again)", async () => {
    const { clock, tried, state, follow } = host([]);
    state.busy = true;
    follow.acknowledged(0);
    await clock.advance(300);
    expect(tried).toEqual([]);
    state.busy = false;
    await clock.advance(200);
    expect(tried).toEqual([400]);
    state.awaits = false;
    await clock.advance(3_000);
    expect(tried).toEqual([400]);
    expect(clock.pendingTimers).toBe(0);
  });

  it("a later acknowledgement of the same shard extends the attempts without doubling them", async () => {
    const { clock, tried, follow } = host([]);
    follow.acknowledged(0);
    await clock.advance(500);
    follow.acknowledged(0);
    await clock.advance(3_000);
    expect(tried).toEqual([200, 400, 600, 800, 1_000, 1_200, 1_400]);
  });
});

describe("ReplicaStore: the hand-over entry heard", () => {
  it("tells onHandOverEntry when a message's entries end with the leader's hand-over entry, and not once the leader appended again", async () => {
    const heard: number[] = [];
    const store = new ReplicaStore({ incarnation: "b-1", shards: () => 4, rowEpoch: () => null, createSink: () => new ShardReplicaSink(new InMemoryLockService({ replica: true, leaderId: "L5" })), onHandOverEntry: (shard) => heard.push(shard) });
    const stream: StreamIdentity = { shard: 2, epoch: 5, leaderId: "L5", leaderIncarnation: "a-1", standbyIncarnation: "b-1", streamId: "s1" };
    store.receive({ kind: "snapshot", stream, seq: 0, snapshot: { namespaces: {} } });
    store.receive({ kind: "entries", stream, fromSeq: 0, entries: [HAND_OVER_ENTRY] });
    expect(heard).toEqual([2]);
    expect(store.get(2)!.sink.handedOver?.()).toBe(true);
    // A re-send of what was applied already tells nothing more.
    store.receive({ kind: "entries", stream, fromSeq: 0, entries: [HAND_OVER_ENTRY] });
    expect(heard).toEqual([2]);
    // The leader kept the shard (a balance move that did not happen) and appended again: a grant.
    const leader = new InMemoryLockService({ leaderId: "L5" });
    const fed: unknown[] = [];
    leader.setReplicationSink((ns, entry) => void fed.push({ ns, entry }));
    await leader.lock("ns", { locks: [{ descriptor: "held", mode: "exclusive" }] });
    await leader.close();
    expect(fed.length).toBeGreaterThan(0);
    expect(store.receive({ kind: "entries", stream, fromSeq: 1, entries: fed })).toEqual({ ackedSeq: 1 + fed.length });
    expect(store.get(2)!.sink.handedOver?.()).toBe(false);
    expect(heard).toEqual([2]);
  });
});
