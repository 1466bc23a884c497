import type { PeerSession } from "./peers/peer.js";
import { pacedRound } from "./peers/paced-round.js";
import { runRound } from "./peers/workloads.js";
import { cpuMs } from "./process-cpu.js";
import { SAME_PROMISE_SETUPS, startSameSetups, type Release, type Setup, type SetupName } from "./same-promise-setups.js";
import { quantile } from "./stats.js";

/** How {@link samePromiseTrials} measures. */
export interface SamePromiseOptions {
  /** Trials, each with new processes for every setup. */
  readonly trials: number;
  /** c64 rounds per trial; each runs every setup once, the order rotating by one each round. */
  readonly rounds: number;
  /** Length of one setup's c64 run in a round (ms). */
  readonly ms: number;
  /** How long each setup is driven at c64 before the first round, per trial (ms): new processes are slow at first. */
  readonly warmMs: number;
  /** Length of each setup's one-caller run, once per trial (ms). */
  readonly c1Ms: number;
  /** Length of each setup's paced run, once per trial (ms), over which its servers' CPU is read. */
  readonly pacedMs: number;
  /** The paced load's rate, pairs/s over 64 callers (issue 32: 8,000, which every leasehold setup and Redis carry). */
  readonly pacedRate: number;
  readonly progress: (message: string) => void;
}

/** What one setup measured over all trials. */
export interface SetupMeasures {
  /** c64 pairs/s, one per round of every trial. */
  readonly c64: number[];
  /** One caller's p50 lock call (µs, lock + awaited unlock), one per trial. */
  readonly c1P50Us: number[];
  /** CPU per pair (µs) of each role's process at the paced load, `[role][trial]`. */
  readonly cpuUsPerPair: number[][];
  /** Pairs/s the paced run achieved, one per trial (below the rate when the setup could not keep it). */
  readonly pacedPairsPerS: number[];
  /** Redis only: grants not counted because `WAIT 1` answered 0, over the whole run. */
  unreplicated: number;
}

/** Everything a run measured: by setup, what was skipped, and the per-round ratio of the cluster with a standby over Redis. */
export interface SamePromiseRun {
  readonly measures: Map<SetupName, SetupMeasures>;
  readonly skips: { readonly name: SetupName; readonly reason: string }[];
  /** Each round's c64 pairs/s by setup, in the order run (for ratios of any two setups in the same round: {@link perRound}). */
  readonly roundRates: ReadonlyMap<SetupName, number>[];
}

/** `a`'s c64 pairs/s over `b`'s in the same round, one per round that ran both (none when either was skipped). */
export function perRound(run: SamePromiseRun, a: SetupName, b: SetupName): number[] {
  return run.roundRates.filter((r) => r.has(a) && r.has(b)).map((r) => r.get(a)! / r.get(b)!);
}

/** The Redis session's count of unacknowledged grants, when `session` is one. */
function unreplicatedOf(session: PeerSession): number {
  const count = (session as { unreplicated?: unknown }).unreplicated;
  return typeof count === "function" ? (count as () => number)() : 0;
}

/**
 * Side by side, in trials with new processes: the single server, the cluster without a standby,
 * with the echo floor's, with the two floor standbys' and with a real one, Redis primary + replica and etcd (each when it started; same-promise-setups.ts). Per
 * trial: every setup warmed at c64, then `rounds` c64 rounds (64 callers on 4 keys each, lock +
 * tryUnlock or the peer's lock + unlock) in an order that rotates each round, then each setup's
 * servers' CPU (/proc) over a paced run at `pacedRate`, then one caller's p50 lock call. The same
 * `Setup.session` drives all three, so every setup runs the same workload code.
 */
export async function samePromiseTrials(options: SamePromiseOptions): Promise<SamePromiseRun> {
  const measures = new Map<SetupName, SetupMeasures>();
  const roundRates: Map<SetupName, number>[] = [];
  let skips: SamePromiseRun["skips"] = [];
  const measuresOf = (setup: Setup): SetupMeasures => {
    let m = measures.get(setup.name);
    if (m === undefined) measures.set(setup.name, (m = { c64: [], c1P50Us: [], cpuUsPerPair: setup.pids.map(() => []), pacedPairsPerS: [], unreplicated: 0 }));
    return m;
  };
  let sessionCount = 0;
  const withSession = async <T>(setup: Setup, release: Release, run: (s: PeerSession) => Promise<T>): Promise<T> => {
    const session = await setup.session(release, `same-promise-${setup.name}-${sessionCount++}`);
    try {
      return await run(session);
    } finally {
      await session.end();
      measuresOf(setup).unreplicated += unreplicatedOf(session);
    }
  };
  for (let t = 0; t < options.trials; t++) {
    const started = await startSameSetups(options.progress);
    skips = started.skips;
    try {
      const { setups } = started;
      for (const setup of setups) await withSession(setup, "try", (s) => runRound(s, "c64", options.warmMs, { pairs: false, waits: false }));
      for (let r = 0; r < options.rounds; r++) {
        const rates = new Map<SetupName, number>();
        for (let i = 0; i < setups.length; i++) {
          const setup = setups[(i + r + t) % setups.length]!;
          const round = await withSession(setup, "try", (s) => runRound(s, "c64", options.ms, { pairs: false, waits: false }));
          rates.set(setup.name, round.pairs / round.seconds);
          measuresOf(setup).c64.push(round.pairs / round.seconds);
        }
        roundRates.push(rates);
        options.progress(`trial ${t + 1} round ${r + 1}: c64 pairs/s ${[...rates].map(([n, v]) => `${n} ${Math.round(v)}`).join(", ")}`);
      }
      for (let i = 0; i < setups.length; i++) {
        const setup = setups[(i + t) % setups.length]!;
        const before = setup.pids.map(cpuMs);
        const paced = await withSession(setup, "try", (s) => pacedRound(s, options.pacedRate, options.pacedMs));
        const perPair = setup.pids.map((pid, k) => ((cpuMs(pid) - before[k]!) * 1_000) / Math.max(1, paced.pairs));
        const m = measuresOf(setup);
        perPair.forEach((us, k) => m.cpuUsPerPair[k]!.push(us));
        m.pacedPairsPerS.push(paced.pairs / paced.seconds);
        options.progress(`trial ${t + 1} paced ${setup.name}: ${Math.round(paced.pairs / paced.seconds)} pairs/s (${paced.skipped} slots skipped), CPU µs per pair ${perPair.map((x) => x.toFixed(1)).join(" + ")}`);
      }
      for (let i = 0; i < setups.length; i++) {
        const setup = setups[(i + t) % setups.length]!;
        const c1 = await withSession(setup, "await", (s) => runRound(s, "c1", options.c1Ms, { pairs: false, waits: true }));
        measuresOf(setup).c1P50Us.push(quantile(c1.waitUs, 0.5));
      }
      options.progress(`trial ${t + 1} c1 p50 µs: ${SAME_PROMISE_SETUPS.filter((n) => measures.has(n)).map((n) => `${n} ${Math.round(measures.get(n)!.c1P50Us.at(-1)!)}`).join(", ")}`);
    } finally {
      await started.stop();
    }
  }
  return { measures, skips, roundRates };
}
