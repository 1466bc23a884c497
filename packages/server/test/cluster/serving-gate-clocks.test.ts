import { LeaseholdError } from "@leasehold/protocol";
import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import type { Coordinator, HeldTerm } from "../../src/cluster/coordinator.js";
import { LeaseRenewer } from "../../src/cluster/lease-renewer.js";
import { ShardTerm } from "../../src/cluster/shard-term.js";
import type { GateDeadline } from "../../src/cluster/shard-term-options.js";
import type { TestBreak } from "../../src/cluster/test-breaks.js";

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
    closed.length = 0;
    mono = 10_000;
    wall = WALL_START;
  });

  /** A term whose acquisition was sent now (on both clocks): its gate closes `LEADER_LEASE_MS − MARGIN` later. */
  const closed: number[] = [];
  const openTerm = async (coordinator = boundsOnly(), breaks: readonly TestBreak[] = [], leaseMs = 1_000): Promise<ShardTerm> => {
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
      leaseMs,
      validForMs: leaseMs / 2,
      reserveBlock: 1_000,
      retryAfterMs: 100,
      onFailed: (_term, reason) => failed.push(reason),
      onGateClosed: (t) => closed.push(t.epoch),
      endOnGateClose: breaks.includes("end-on-gate-close"),
      onBoundExtended: () => undefined,
    });
    terms.push(term);
    await term.prepare("ns");
    return term;
  };
  /** The lease loop renewing `held`, an unmatched renewal recorded in `failed`. */
  const renewerOf = (coordinator: Coordinator, held: () => ShardTerm[]): LeaseRenewer =>
    new LeaseRenewer({
      coordinator,
      serverId: "server-1",
      leaderLeaseMs: LEADER_LEASE_MS,
      margin: MARGIN,
      clock: () => mono,
      wallClock: () => wall,
      held,
      member: () => ({ serverId: "server-1", incarnation: "incarnation-1", url: "http://x", ready: true }),
      onUnmatched: () => failed.push("unmatched"),
      onMembers: () => undefined,
      onError: () => undefined,
    });
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
    // The gate is reported closed; the term keeps its table (it does not end) until a renewal tells.
    await Promise.resolve();
    expect(closed).toEqual([1]);
    expect(failed).toEqual([]);
    expect(term.isEnded).toBe(false);
  });

  /**
   * Found by pnpm sim (seeds 73 and 132): the renewals of a leader whose standby had just died
   * committed but answered late (a slow database) or not at all (answers lost); its gate closed,
   * the term ended with its table, and its next pass found the row, still its own and live, without
   * a term and released it: every lock lost to one failure. A term whose gate closed by time keeps
   * its table, serves nothing, and is renewed on: a renewal that matches (the row is still its
   * own, so no one else led meanwhile) reopens the gate; one that matches nothing ends it.
   */
  it.each([
    { breaks: [] as TestBreak[], reopens: true },
    // Negative control: with the rule removed the term ends at the closure, table and all.
    { breaks: ["end-on-gate-close"] as TestBreak[], reopens: false },
  ])("a gate closed by time reopens, table and all, when a renewal then matches; breaks $breaks", async ({ breaks, reopens }) => {
    const coordinator = boundsOnly({ renew: async () => [0] });
    // Leases far longer than the closure: nothing lapses meanwhile.
    const term = await openTerm(coordinator, breaks, 10_000);
    const locked = term.service.beginLock("ns", { locks: [{ descriptor: "held", mode: "exclusive" }], acquireTimeoutMs: 0 });
    expect((locked as { status: string }).status).toBe("acquired");
    // Renewals answered nothing for a whole leader lease: the gate closes.
    mono += LEADER_LEASE_MS;
    wall += LEADER_LEASE_MS;
    expect(term.isOpen(mono)).toBe(false);
    await term.service.timestamps("ns", { count: 1 }).catch(() => null);
    await Promise.resolve();
    // Then a renewal is sent, and matches: the row was this term's all along.
    const renewer = renewerOf(coordinator, () => (term.isEnded ? [] : [term]));
    if (!reopens) {
      // The term asked the runtime to end it at the closure (and the runtime ends it, table and all).
      expect(failed).toContain("serving gate closed");
      return;
    }
    await renewer.renew();
    expect(term.isOpen(mono)).toBe(true);
    // The lock is still held: a second request for it is refused at once.
    const second = term.service.beginLock("ns", { locks: [{ descriptor: "held", mode: "exclusive" }], acquireTimeoutMs: 0 });
    expect((second as { status: string }).status).toBe("timeout");
    expect(failed).toEqual([]);
  });

  it("a gate closed by time ends the term once a renewal matches nothing (the row moved on)", async () => {
    const coordinator = boundsOnly({ renew: async () => [] });
    const term = await openTerm(coordinator);
    mono += LEADER_LEASE_MS;
    wall += LEADER_LEASE_MS;
    expect(term.isOpen(mono)).toBe(false);
    const renewer = renewerOf(coordinator, () => [term]);
    await renewer.renew();
    expect(failed).toEqual(["unmatched"]);
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
    const renewer = renewerOf(coordinator, () => [term]);
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
