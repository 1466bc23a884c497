import type { TestBreak } from "@leasehold/server/internal";
import { forbidRealTimers, seedRandomness, skipStackTraces } from "./sim-determinism.js";
import type { Violation } from "./sim-history.js";
import { FaultPlan } from "./sim-faults.js";
import { SimRandom } from "./sim-random.js";
import { SimWorld } from "./sim-world.js";
import { DEFAULT_ODDS, FULL_WAIT_RESENDS_SHARE, describeOdds, swarmOdds } from "./sim-swarm.js";

/** How long a run is, in simulated ms: start-up, faults with clients working, then a quiet tail. */
const FAULTS_UNTIL = 30_000;
const END = 42_000;
const LEADER_LEASE_MS = 1_000;

/** How a seed runs beyond its seed and breaks. */
export interface RunOptions {
  /** Swarm testing: the seed draws its own odds of lost answers and NOTIFYs (sim-swarm.ts). Default false: {@link DEFAULT_ODDS}. */
  readonly swarm?: boolean | undefined;
  /**
   * Two clients of each five re-send a waiting request with its whole wait again, the same body, as
   * a generic HTTP retry does (legal protocol use: a re-sent `requestId` moves its wait's deadline
   * later), where leasehold's client asks for what is left. Default false.
   */
  readonly fullWaitResends?: boolean | undefined;
  /**
   * Half the faults are aimed at a hand-over's moment (sim-aimed.ts): each waits for the next row
   * move, adoption or standby move a member sends, and strikes then. Default false.
   */
  readonly aimed?: boolean | undefined;
  /**
   * Only with {@link aimed}: the strikes aimed at a hand-over's row move may also lose its NOTIFY
   * and, for one to two leader leases, the answers of its taker's reads of the lease rows (a
   * `blind` strike, sim-aimed.ts), so the taker learns of the moved row neither way. Default
   * false: every draw and event as without it.
   */
  readonly blindTaker?: boolean | undefined;
  /**
   * Host crashes (power loss, kernel panic): what a crashed server sent and has not arrived yet is
   * lost too. A quarter of the faults host-crash a leader just after it answered a queued request
   * with a grant, and half the crashes are host crashes (sim-faults.ts). Default false: nothing is
   * drawn for them, and every run is as without the option.
   */
  readonly hostCrashes?: boolean | undefined;
}

/** What one seed's run found. */
export interface SeedResult {
  readonly seed: number;
  readonly violations: readonly Violation[];
  /** Hex digest of every event the run ran, in order. */
  readonly digest: string;
  readonly steps: number;
  /** The faults injected, in order, one line each (for the trace). */
  readonly faults: readonly string[];
  /** The last steps before the end (time, owner, event), when asked for (`traceTail`). */
  readonly trace: readonly string[];
  /** The odds a `--swarm` run drew (and the share of clients re-sending the whole wait), one line; `null` for the defaults. */
  readonly odds: string | null;
}

/**
 * Run seed `seed`: three servers (the real cluster code and engine) over an in-memory database on
 * one seeded scheduler, with `breaks` switched off; clients lock, retry, hedge, refresh, unlock and
 * ask for timestamps while the fault plan crashes, stops, pauses, partitions and skews; then a
 * quiet tail in which every shard must be led again. Answers the violations of the cluster's
 * promises the clients' history shows.
 */
export async function runSeed(seed: number, breaks: ReadonlySet<TestBreak>, traceTail = 0, options: RunOptions = {}): Promise<SeedResult> {
  const random = new SimRandom(seed);
  const restoreRandomness = seedRandomness(random.fork("ids"));
  const restoreTimers = forbidRealTimers();
  const restoreStacks = skipStackTraces();
  const tail: string[] = [];
  try {
    const plan = random.fork("plan");
    const leaseMs = [plan.pick([4_000, 6_000]), plan.pick([4_000, 6_000, 12_000]), 6_000];
    // The reservation block: 2 (nearly every timestamp extends the bound, fenced by the epoch, as
    // the reliability suite's epoch-fence control runs) or the usual 1,000.
    const reserveBlock = random.fork("reserve").pick([2, 1_000]);
    const odds = options.swarm === true ? swarmOdds(seed) : undefined;
    const fullWaitResends = options.fullWaitResends === true ? FULL_WAIT_RESENDS_SHARE : 0;
    const world = new SimWorld(random.fork("world"), { servers: 3, joiners: 1, shards: 4, leaderLeaseMs: LEADER_LEASE_MS, leaseMs, breaks, reserveBlock, odds, fullWaitResends }, traceTail > 0 ? (at, owner, label) => {
      tail.push(`${at.toFixed(3)} ${owner} ${label}`);
      if (tail.length > traceTail) tail.shift();
    } : undefined);
    const s = world.scheduler;
    const ids = world.ids();
    for (const [i, id] of ids.entries()) s.after(i * plan.int(0, 300), "world", `start ${id}`, () => world.start(id));
    // Half the seeds leave shard 3 (ns-d) to one client of its own: it holds its locks for seconds,
    // refreshing (refreshes are not replicated), so the shard's log is idle for long spells.
    if (random.fork("idle").chance(0.5)) {
      world.startClients(5, ["ns-a", "ns-b", "ns-c", "ns-e", "ns-f"], ["x", "y"], FAULTS_UNTIL + 6_000);
      world.startClients(1, ["ns-d"], ["x", "y"], FAULTS_UNTIL + 6_000, 5);
    } else world.startClients(5, ["ns-a", "ns-b", "ns-c", "ns-d", "ns-e", "ns-f"], ["x", "y"], FAULTS_UNTIL + 6_000);
    // The fault plan (sim-faults.ts): one fault at a time, each given time to heal before the next.
    const faultPlan = new FaultPlan(world, plan, FAULTS_UNTIL, options);
    faultPlan.begin(plan.int(4_000, 6_000));
    // A dead standby is never left named in sync for long (probes find it within two thirds of a
    // leader lease, its record takes a statement more): checked every quarter of a leader lease.
    const checkClaims = (): void => {
      world.rows.checkStandbyClaims(2 * LEADER_LEASE_MS);
      if (s.now + LEADER_LEASE_MS / 4 < END) s.after(LEADER_LEASE_MS / 4, "world", "standby claims", checkClaims);
    };
    checkClaims();
    await s.runUntil(END);
    if (!world.rows.ledNow()) world.history.violated({ invariant: "liveness", detail: `a shard has no live leader ${((END - FAULTS_UNTIL) / 1000).toFixed(0)} s after the last fault began` });
    return { seed, violations: world.history.check(), digest: s.hex(), steps: s.steps, faults: faultPlan.log, trace: tail, odds: odds === undefined && fullWaitResends === 0 ? null : describeOdds(odds ?? DEFAULT_ODDS, fullWaitResends) };
  } finally {
    restoreTimers();
    restoreRandomness();
    restoreStacks();
  }
}
