import { LeaseholdError } from "@leasehold/protocol";
import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import type { Coordinator, HeldTerm } from "../../src/cluster/coordinator.js";
import { LeaseRenewer } from "../../src/cluster/lease-renewer.js";
import { ShardTerm } from "../../src/cluster/shard-term.js";

const LEADER_LEASE_MS = 1_500;

describe("a term being handed over is renewed until its row moved (its gate is closed, but the row must not expire under the hand-over)", () => {
  const terms: ShardTerm[] = [];
  afterEach(() => {
    for (const term of terms.splice(0)) term.end(new LeaseholdError("UNAVAILABLE", "test over"));
  });

  /** A term of `shard` (its table needs no statement here). */
  const termOf = (shard: number): ShardTerm => {
    const term = new ShardTerm({
      term: { shard, epoch: 4 },
      leaderId: `leader-${shard}`,
      serverId: "a",
      coordinator: {} as Coordinator,
      logger: pino({ level: "silent" }),
      clock: () => performance.now(),
      wallClock: () => Date.now(),
      gateUntil: { monotonic: performance.now() + 60_000, wall: Date.now() + 60_000 },
      grantsFrom: 0,
      lockDelayMs: 0,
      leaseMs: 1_000,
      validForMs: 500,
      reserveBlock: 1_000,
      retryAfterMs: 100,
      onFailed: () => undefined,
      onBoundExtended: () => undefined,
    });
    terms.push(term);
    return term;
  };

  /** A renewer of `led` and of the hand-overs in `handing`, whose statements it records; answers what each renewal sent. */
  function renewerOf(led: ShardTerm[], handing: ShardTerm[], unsafeStopRenewingHandingOver = false) {
    const sent: number[][] = [];
    const unmatched: number[] = [];
    const coordinator = {
      renew: async (_serverId: string, held: readonly HeldTerm[]) => {
        sent.push(held.map((t) => t.shard));
        return held.map((t) => t.shard);
      },
    } as unknown as Coordinator;
    const renewer = new LeaseRenewer({
      coordinator,
      serverId: "a",
      leaderLeaseMs: LEADER_LEASE_MS,
      margin: 150,
      clock: () => performance.now(),
      wallClock: () => Date.now(),
      held: () => led,
      handingOver: () => handing,
      unsafeStopRenewingHandingOver,
      member: () => ({ serverId: "a", incarnation: "a-1", url: "http://a", ready: true }),
      onUnmatched: (term) => unmatched.push(term.shard),
      onMembers: () => undefined,
      onError: () => undefined,
    });
    return { renewer, sent, unmatched };
  }

  it("sends the shard being handed over with the led ones, and stops once its hand-over is over", async () => {
    const led = termOf(0);
    const giving = termOf(1);
    const { renewer, sent, unmatched } = renewerOf([led], [giving]);
    // The stop ended it to hand it over: gate closed, replication open, row not moved yet.
    giving.end(new LeaseholdError("UNAVAILABLE", "handing over"), true);
    await renewer.renew();
    expect(sent).toEqual([[0, 1]]);
    // The row moved (or the hand-over gave up): the term is no longer renewed, even while the runtime still lists it.
    giving.finishHandOver(new LeaseholdError("UNAVAILABLE", "handed over"));
    await renewer.renew();
    expect(sent).toEqual([[0, 1], [0]]);
    // A term being handed over is ended already: a renewal never reports it lost.
    expect(unmatched).toEqual([]);
  });

  it("negative control (stop-renewing-handing-over): the shard being handed over is not renewed, so its row may expire before it moves", async () => {
    const giving = termOf(1);
    giving.end(new LeaseholdError("UNAVAILABLE", "handing over"), true);
    const { renewer, sent } = renewerOf([], [giving], true);
    await renewer.renew();
    expect(sent).toEqual([]);
  });
});
