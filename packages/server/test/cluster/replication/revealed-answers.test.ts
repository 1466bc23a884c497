import { afterEach, describe, expect, it } from "vitest";
import type { LockResponse, LockWatchUpdate } from "@leasehold/protocol";
import { RevealedAnswers } from "../../../src/cluster/replication/revealed-answers.js";
import { ReplicaStore } from "../../../src/cluster/replication/replica-store.js";
import { ShardReplicaSink, snapshotShard } from "../../../src/cluster/replication/replicated-tables.js";
import { TermReplicator } from "../../../src/cluster/replication/term-replicator.js";
import { InMemoryLockService } from "../../../src/service/in-memory-lock-service.js";
import { WaitingLockHandle } from "../../../src/service/waiting-lock-handle.js";
import { FakeReplicationClock, settle } from "./fake-replication-clock.js";
import { inProcessReplication } from "./in-process-replication.js";

const isGrant = (entry: unknown): boolean => (entry as { type?: unknown }).type === "grant";
const lockX = (requestId: string, acquireTimeoutMs = 0) => ({ locks: [{ descriptor: "x", mode: "exclusive" }], requestId, acquireTimeoutMs });

const services: InMemoryLockService[] = [];
afterEach(async () => {
  for (const s of services.splice(0)) await s.close();
});

/**
 * A leader's real lock table (an {@link InMemoryLockService}) replicated to a real replica store
 * in process, with the standby's acknowledgements held back while `partitioned` (bytes stop: the
 * partition of issue 29 item 1), and a {@link RevealedAnswers} the term's answers go through. The
 * replicator is attached only by `attach()`, so a request can begin before it (item 2).
 */
function setup(options: { readonly unsafeOwnEntriesOnly?: boolean; readonly unsafeFromAttach?: boolean } = {}) {
  const clock = new FakeReplicationClock();
  const service = new InMemoryLockService({ leaderId: "L1", leaseMs: 30_000, validForMs: 15_000 });
  services.push(service);
  const store = new ReplicaStore({ incarnation: "s-inc", shards: () => 4, rowEpoch: () => null, createSink: () => new ShardReplicaSink(new InMemoryLockService({ leaderId: "L1", replica: true }) as never) });
  let partitioned = false;
  const held: (() => void)[] = [];
  const replication = inProcessReplication(store, () => snapshotShard(service), clock, () => partitioned, held);
  const replicator = new TermReplicator(service, replication, { needsAck: isGrant });
  const answers = new RevealedAnswers(options);
  return {
    clock,
    service,
    replication,
    answers,
    /** What the leader side does on its tick: feed the log, name the standby, let it sync. */
    async attach() {
      this.follow();
      await this.attachStandby();
    },
    /** What the leader side does as the term starts (`LeaderSide.follow`): the replicator, no standby yet. */
    follow() {
      answers.attach(replicator);
      replicator.start();
    },
    /** A later round of the leader side: name the standby and let it sync. */
    async attachStandby() {
      await replication.attach({ serverId: "s", incarnation: "s-inc", url: "http://s.invalid" });
      await settle();
      expect(replication.rule.state).toBe("in-sync");
    },
    partition: () => (partitioned = true),
    async heal() {
      partitioned = false;
      for (const deliver of held.splice(0)) deliver();
      await settle();
    },
  };
}

/** Whether `answer` (a handle's promise or a plain value) has settled after the pending callbacks ran. */
async function answeredYet<A>(begun: A | WaitingLockHandle<A>): Promise<boolean> {
  if (!(begun instanceof WaitingLockHandle)) return true;
  let done = false;
  void begun.answer.then(
    () => (done = true),
    () => (done = true),
  );
  await settle();
  return done;
}

/**
 * A lock held and a waiter begun behind it; then `join` (what brings the standby in sync), the
 * standby cut off, the holder unlocked: answers the waiter, granted but not yet acknowledged.
 */
async function waiterGrantedWhileCutOff(s: ReturnType<typeof setup>, join: () => Promise<void>) {
  const holder = await s.service.lock("ns", lockX("holder"));
  expect(holder.status).toBe("acquired");
  const waiter = s.answers.begun(() => s.service.beginLock("ns", lockX("waiter", 60_000)));
  expect(waiter).toBeInstanceOf(WaitingLockHandle);
  await join();
  s.partition();
  await s.service.unlock("ns", { tokens: [(holder as Extract<LockResponse, { status: "acquired" }>).token] });
  await s.clock.endTurn();
  return waiter;
}

describe("every answer that reveals a grant waits for the acknowledgement of the entry that created it", () => {
  it("a retry with the same requestId, sent while the first answer waits on a partitioned standby, waits too (issue 29 item 1)", async () => {
    const s = setup();
    await s.attach();
    s.partition();
    const first = s.answers.begun(() => s.service.beginLock("ns", lockX("r")));
    await s.clock.endTurn();
    expect(await answeredYet(first)).toBe(false);
    // The same request on another connection: the table renews the held request and answers it
    // without a new entry. Answered now, it would tell of a grant the standby never saw.
    const retry = s.answers.begun(() => s.service.beginLock("ns", lockX("r")));
    await s.clock.endTurn();
    expect(await answeredYet(retry)).toBe(false);
    await s.heal();
    const a = await (first as WaitingLockHandle).answer;
    const b = await (retry as WaitingLockHandle).answer;
    expect(a.status).toBe("acquired");
    expect(b).toMatchObject({ status: "acquired", token: (a as Extract<LockResponse, { status: "acquired" }>).token });
  });

  it("a lock-watch event of an unacknowledged grant waits for the acknowledgement", async () => {
    const s = setup();
    await s.service.lockWatches("ns", { prefixes: ["x"] });
    await s.attach();
    const before = await s.service.lockEvents("ns", { since: null });
    s.partition();
    const granted = s.answers.begun(() => s.service.beginLock("ns", lockX("w")));
    await s.clock.endTurn();
    let update: LockWatchUpdate | null = null;
    void s.answers.answer(() => s.service.lockEvents("ns", { since: { logId: before.logId, version: before.version } })).then((u) => (update = u));
    await settle();
    expect(update).toBeNull();
    await s.heal();
    await (granted as WaitingLockHandle).answer;
    await settle();
    expect(update).not.toBeNull();
  });

  it("a waiter that began before the replicator attached is held once granted after the standby came in sync (issue 29 item 2)", async () => {
    const s = setup();
    // Before the leader side's tick: no replicator yet. The holder's lock is answered as it is.
    const waiter = await waiterGrantedWhileCutOff(s, () => s.attach());
    expect(await answeredYet(waiter)).toBe(false);
    await s.heal();
    await s.clock.endTurn();
    await expect((waiter as WaitingLockHandle).answer).resolves.toMatchObject({ status: "acquired" });
  });

  it("a waiter that began in the term's first moments, before its standby was in sync, is held once granted after it came in sync", async () => {
    const s = setup();
    // As production wires it: the replicator is attached in the turn the term starts, the standby
    // by a later round of the leader side. Until it is in sync, answers are given at once.
    s.follow();
    const waiter = await waiterGrantedWhileCutOff(s, () => s.attachStandby());
    expect(await answeredYet(waiter)).toBe(false);
    await s.heal();
    await s.clock.endTurn();
    await expect((waiter as WaitingLockHandle).answer).resolves.toMatchObject({ status: "acquired" });
  });

  it("negative controls: with the rules broken the same answers come at once", async () => {
    const retry = setup({ unsafeOwnEntriesOnly: true });
    await retry.attach();
    retry.partition();
    retry.answers.begun(() => retry.service.beginLock("ns", lockX("r")));
    await retry.clock.endTurn();
    expect(await answeredYet(retry.answers.begun(() => retry.service.beginLock("ns", lockX("r"))))).toBe(true);

    const early = setup({ unsafeFromAttach: true });
    expect(await answeredYet(await waiterGrantedWhileCutOff(early, () => early.attach()))).toBe(true);

    // The window as production has it: replicator attached, standby not yet in sync.
    const firstMoments = setup({ unsafeFromAttach: true });
    firstMoments.follow();
    expect(await answeredYet(await waiterGrantedWhileCutOff(firstMoments, () => firstMoments.attachStandby()))).toBe(true);
  });
});

describe("a deposed leader's held answers", () => {
  it("become a 503 the client re-sends, never a 500, for a begun lock and for a promised answer", async () => {
    const { LeaseholdError } = await import("@leasehold/protocol");
    const { ReplicationFencedError } = await import("../../../src/cluster/replication/sync-rule.js");
    const pending = { neededSeq: 1, settled: () => Promise.reject(new ReplicationFencedError("deposed")) } as unknown as TermReplicator;
    const answers = new RevealedAnswers();
    answers.attach(pending);
    const begun = answers.begun(() => ({ status: "acquired" }));
    expect(begun).toBeInstanceOf(WaitingLockHandle);
    expect((begun as WaitingLockHandle<unknown>).acknowledging).toBe(true);
    const err = await (begun as WaitingLockHandle<unknown>).answer.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LeaseholdError);
    expect((err as InstanceType<typeof LeaseholdError>).code).toBe("UNAVAILABLE");
    const txn = await answers.answer(async () => ({ started: true })).catch((e: unknown) => e);
    expect((txn as InstanceType<typeof LeaseholdError>).status).toBe(503);
  });
});
