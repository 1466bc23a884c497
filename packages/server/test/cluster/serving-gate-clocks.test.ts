import { LeaseholdError } from "@leasehold/protocol";
import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import type { Coordinator, HeldTerm } from "../../src/cluster/coordinator.js";
import { LeaseRenewer } from "../../src/cluster/lease-renewer.js";
import { ShardTerm, type GateDeadline } from "../../src/cluster/shard-term.js";

// Time itself is the subject here: both clocks are injected, and a "pause" moves one of them.
const LEADER_LEASE_MS = 1_500;
const MARGIN = 150;
const WALL_START = 1_800_000_000_000;

/** Bounds in memory: the term needs a namespace's bound before it hands out a timestamp. */
function boundsOnly(overrides: Partial<Coordinator> = {}): Coordinator {
  const bounds = new Map<string, number>();
  const refuse = (): never => {
    throw new Error("not used by this test");
  };
  return {
    readBound: async (namespace: string) => ({ bound: bounds.get(namespace) ?? 0, immutable: null, epoch: 0 }),
    extendBound: async (namespace: string, _term: HeldTerm, from: number, to: number) => {
      if ((bounds.get(namespace) ?? 0) !== from) return false;
      bounds.set(namespace, to);
      return true;
    },
    renew: refuse,
    heartbeat: refuse,
    ...overrides,
  } as unknown as Coordinator;
}

describe("serving gate: closed when either the monotonic or the wall clock passes its deadline", () => {
  let mono = 10_000;
  let wall = WALL_START;
  const failed: string[] = [];
  const terms: ShardTerm[] = [];
  afterEach(() => {
    for (const term of terms.splice(0)) term.end(new LeaseholdError("UNAVAILABLE", "test over"));
    failed.length = 0;
    mono = 10_000;
    wall = WALL_START;
  });

  /** A term whose acquisition was sent now (on both clocks): its gate closes `LEADER_LEASE_MS − MARGIN` later. */
  const openTerm = async (coordinator = boundsOnly()): Promise<ShardTerm> => {
    const term = new ShardTerm({
      term: { shard: 0, epoch: 1 },
      leaderId: "leader-1",
      serverId: "server-1",
      coordinator,
      logger: pino({ level: "silent" }),
      clock: () => mono,
      wallClock: () => wall,
      gateUntil: { monotonic: mono + LEADER_LEASE_MS - MARGIN, wall: wall + LEADER_LEASE_MS - MARGIN },
      grantsFrom: mono,
      lockDelayMs: 0,
      leaseMs: 1_000,
      validForMs: 500,
      reserveBlock: 1_000,
      retryAfterMs: 100,
      onFailed: (_term, reason) => failed.push(reason),
      onBoundExtended: () => undefined,
    });
    terms.push(term);
    await term.prepare("ns");
    return term;
  };
  const timestamp = (term: ShardTerm) => term.service.timestamps("ns", { count: 1 });

  it("a paused VM: the monotonic clock stood still while the wall clock ran past the deadline, so the resumed leader refuses", async () => {
    const term = await openTerm();
    expect((await timestamp(term)).count).toBe(1);
    // Suspended for 5 s: CLOCK_MONOTONIC did not advance, the wall clock was set forward on resume.
    wall += 5_000;
    expect(term.isOpen(mono)).toBe(false);
    const refused = await timestamp(term).then(
      () => null,
      (err: unknown) => err,
    );
    expect(refused).toBeInstanceOf(LeaseholdError);
    expect((refused as LeaseholdError).status).toBe(503);
    // It also starts stepping down (the runtime then drops the shard).
    await Promise.resolve();
    expect(failed).toContain("serving gate closed");
  });

  it("either clock alone closes it at exactly its deadline, not a millisecond before", async () => {
    const term = await openTerm();
    const deadline = { monotonic: mono + LEADER_LEASE_MS - MARGIN, wall: wall + LEADER_LEASE_MS - MARGIN };
    mono = deadline.monotonic - 1;
    wall = deadline.wall - 1;
    expect(term.isOpen(mono)).toBe(true);
    // The wall clock stepped back (NTP) while the monotonic one ran on: the monotonic guard holds.
    wall = WALL_START - 60_000;
    mono = deadline.monotonic;
    expect(term.isOpen(mono)).toBe(false);
  });

  it("a renewal moves both deadlines to its send time + leader lease − margin, however late its answer arrives", async () => {
    let answer!: (shards: number[]) => void;
    const coordinator = boundsOnly({ renew: () => new Promise<number[]>((resolve) => (answer = resolve)) });
    const term = await openTerm(coordinator);
    const renewer = new LeaseRenewer({
      coordinator,
      serverId: "server-1",
      leaderLeaseMs: LEADER_LEASE_MS,
      margin: MARGIN,
      clock: () => mono,
      wallClock: () => wall,
      held: () => [term],
      member: () => ({ serverId: "server-1", incarnation: "incarnation-1", url: "http://x", ready: true }),
      onUnmatched: () => failed.push("unmatched"),
      onMembers: () => undefined,
      onError: () => undefined,
    });
    mono += 500;
    wall += 500;
    const sent: GateDeadline = { monotonic: mono, wall };
    void renewer.renew();
    // The answer arrives 300 ms after it was sent (committed at once, held back on the way).
    mono += 300;
    wall += 300;
    answer([0]);
    await Promise.resolve();
    await Promise.resolve();
    expect(failed).toEqual([]);
    mono = sent.monotonic + LEADER_LEASE_MS - MARGIN - 1;
    wall = sent.wall + LEADER_LEASE_MS - MARGIN - 1;
    expect(term.isOpen(mono)).toBe(true);
    mono += 1;
    expect(term.isOpen(mono)).toBe(false);
    // And by the wall clock alone (monotonic stopped one millisecond short: a pause).
    mono -= 1;
    wall += 1;
    expect(term.isOpen(mono)).toBe(false);
  });
});
