import pino from "pino";
import { describe, expect, it } from "vitest";
import { ClusterMetrics } from "../../../src/cluster/cluster-metrics.js";
import type { Coordinator } from "../../../src/cluster/coordinator.js";
import { ShardMover, type ShardMoverHost } from "../../../src/cluster/replication/shard-mover.js";
import type { ShardTerm } from "../../../src/cluster/shard-term.js";
import type { TestBreak } from "../../../src/cluster/test-breaks.js";

/** A term as the mover sees it: in sync with its standby `s`, its whole log acknowledged. */
function inSyncTerm(shard: number, waiting = false, standbyDead = false): ShardTerm {
  const replication = {
    standby: { serverId: "s", incarnation: "s-1", url: "http://s" },
    rule: { state: "in-sync" },
    log: { lastSeq: 3 },
    // The hand-over entry, acknowledged at once (this test is about the order of statements).
    append: () => 4,
    // A standby that died after acknowledging entry 3 never acknowledges the hand-over entry (4).
    whenAcked: (seq: number) => (standbyDead && seq > 3 ? new Promise<never>(() => undefined) : Promise.resolve("acked" as const)),
    // No standby move under way.
    settleMove: () => Promise.resolve(),
    // The standby answers the stop's fresh probe at once.
    confirmStandby: () => Promise.resolve(true),
    // The hand-over's deadline timer: due at once when the standby is dead (nothing else would end the wait), else never.
    clock: { now: () => 0, setTimer: (fn: () => void) => (standbyDead ? (setImmediate(fn), () => undefined) : () => undefined), defer: (fn: () => void) => fn() },
  };
  return { shard, epoch: 7, leaderId: "L", waiting, replicator: { replication }, handedOver: { locks: 1, waiters: 0 }, finishHandOver: () => undefined, heldBackPlaces: () => ({}) } as unknown as ShardTerm;
}

/** A stopping server's mover over `terms`, its statements and host calls recorded in `events`. */
function stoppingMover(terms: ShardTerm[], events: string[], breaks: TestBreak[] = [], moveUnknown = false): ShardMover {
  const coordinator = {
    handOver: async (term: { shard: number }) => {
      events.push(`handOver ${term.shard}`);
      // As the statement timeout says it: the move may or may not have committed.
      if (moveUnknown) throw new Error("statement timed out (outcome unknown)");
      return { epoch: 8, url: "http://s" };
    },
    release: async (_: string, released: { shard: number }[]) => {
      events.push(`release ${released.map((t) => t.shard).join(",")}`);
    },
  } as unknown as Coordinator;
  const host: ShardMoverHost = {
    options: { coordinator, serverId: "me", leaderLeaseMs: 1_000, logger: pino({ level: "silent" }), metrics: new ClusterMetrics(() => 0, () => true), breaks: new Set(breaks) },
    incarnation: "me-1",
    led: (shard) => terms[shard] ?? null,
    terms: () => terms,
    leases: () => [],
    members: () => [],
    answering: () => true,
    lose: (term) => events.push(`lose ${term.shard}`),
    handedOver: (term) => events.push(`handedOver ${term.shard}`),
    stopping: () => true,
    warn: () => undefined,
    promoter: () => null,
  };
  return new ShardMover(host);
}

describe("ShardMover.stopAll: a stopping server hands its shards over only once it left the member list", () => {
  it("hands a term still inside its lease-wait over like any other: it may hold transactions' immutable-timestamp locks, and its taker waits out the rest of the wait (carried-lease-wait.test.ts)", async () => {
    const events: string[] = [];
    const terms = [inSyncTerm(0), inSyncTerm(1, true)];
    await stoppingMover(terms, events).stopAll(terms, Promise.resolve());
    // Before pnpm sim's seed 346 it was released ("release 1"), losing a transaction's lock at a SIGTERM of a protected cluster.
    expect(events.sort()).toEqual(["handOver 0", "handOver 1", "handedOver 0", "handedOver 1", "lose 0", "lose 1"]);
  });

  it("negative control (release-waiting-at-stop): the term inside its lease-wait is released, as before pnpm sim's seed 346", async () => {
    const events: string[] = [];
    const terms = [inSyncTerm(0), inSyncTerm(1, true)];
    await stoppingMover(terms, events, ["release-waiting-at-stop"]).stopAll(terms, Promise.resolve());
    expect(events.sort()).toEqual(["handOver 0", "handedOver 0", "lose 0", "lose 1", "release 1"]);
  });

  it("sends no hand-over statement until `left` resolves, then hands every in-sync shard over", async () => {
    const events: string[] = [];
    const terms = [inSyncTerm(0), inSyncTerm(1)];
    let leave!: () => void;
    const left = new Promise<void>((resolve) => (leave = resolve));
    const stopped = stoppingMover(terms, events).stopAll(terms, left);
    // Long enough for every hand-over to run to its statement, were it not waiting.
    for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
    // The gates closed at once (nothing more is granted), but no row moved yet: a taker hearing
    // the NOTIFY while this member is still listed ready could balance a shard straight back to it.
    expect(events).toEqual(["lose 0", "lose 1"]);
    events.push("left");
    leave();
    await stopped;
    expect(events.slice(0, 3)).toEqual(["lose 0", "lose 1", "left"]);
    expect(events.slice(3).sort()).toEqual(["handOver 0", "handOver 1", "handedOver 0", "handedOver 1"]);
  });

  it("a stop whose standby died after acknowledging the whole log gets no acknowledgement of the hand-over entry: the row is not moved to it", async () => {
    const events: string[] = [];
    const terms = [inSyncTerm(0, false, true)];
    await stoppingMover(terms, events).stopAll(terms, Promise.resolve());
    expect(events.sort()).toEqual(["lose 0", "release 0"]);
  });

  it("negative control (hand-over-stale-ack): the stop counts the earlier cumulative acknowledgement, and moves the row to the dead standby", async () => {
    const events: string[] = [];
    const terms = [inSyncTerm(0, false, true)];
    await stoppingMover(terms, events, ["hand-over-stale-ack"]).stopAll(terms, Promise.resolve());
    expect(events.sort()).toEqual(["handOver 0", "handedOver 0", "lose 0"]);
  });

  it("a stop whose row move's outcome is unknown leaves the row as it is: moved, the standby adopts it; not, it lapses and the in-sync standby it names takes it with the table (pnpm sim --aimed, seeds 20 and 570)", async () => {
    const events: string[] = [];
    const terms = [inSyncTerm(0)];
    await stoppingMover(terms, events, [], true).stopAll(terms, Promise.resolve());
    // Releasing would let the next leader start empty if the move had not committed: every lock lost.
    expect(events.sort()).toEqual(["handOver 0", "lose 0"]);
  });

  it("negative control (release-on-unknown-stop): the stop releases the shard after a row move of unknown outcome, as before", async () => {
    const events: string[] = [];
    const terms = [inSyncTerm(0)];
    await stoppingMover(terms, events, ["release-on-unknown-stop"], true).stopAll(terms, Promise.resolve());
    expect(events.sort()).toEqual(["handOver 0", "lose 0", "release 0"]);
  });
});
