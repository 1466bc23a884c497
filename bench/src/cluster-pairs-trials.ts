import { startCluster, stable, type BenchCluster } from "./bench-cluster.js";
import { startServerProcess, type ServerProcess } from "./server-process.js";
import { committers } from "./suites/client.js";

/** What one trial measured: per round, the cluster's and the control's pairs/s over the single server's. */
export interface PairsTrial {
  /** The cluster's rate over the single server's, one per round. */
  readonly clusterOverSingle: number[];
  /** The second single server's rate over the first's, one per round (the control). */
  readonly controlOverSingle: number[];
}

/** How {@link pairsTrials} measures. */
export interface PairsTrialsOptions {
  /** Trials, each with new server processes. */
  readonly trials: number;
  /** Rounds per trial; each round runs all three targets, in the order {@link ROUND_ORDERS} gives. */
  readonly rounds: number;
  /** Length of one target's run in a round (ms). */
  readonly ms: number;
  /** How long each target is driven before the first round, per trial (ms). */
  readonly warmMs: number;
  /** Callers doing lock+tryUnlock at once. */
  readonly callers: number;
  readonly progress: (message: string) => void;
}

/**
 * The order of the three targets (0 the single server, 1 the control, 2 the cluster) in round
 * `r mod 6`: every target runs first, second and third twice in six rounds, and before and after
 * each other target equally often, so a drift of the machine within a trial favours none of them.
 */
export const ROUND_ORDERS: readonly (readonly [number, number, number])[] = [
  [0, 1, 2],
  [1, 2, 0],
  [2, 0, 1],
  [2, 1, 0],
  [1, 0, 2],
  [0, 2, 1],
];

/**
 * Lock+tryUnlock throughput of a 3-server cluster (`--shards 1`: one leader, once leadership has
 * stopped moving) against a single server, with a control: a second single server against the
 * first. Each trial starts all of them anew, because on this machine a server process carries a
 * speed of its own for its whole life (two identical servers measured side by side for 16 rounds
 * came out 3.5% apart): with one process per side the ratio would carry that one draw. New
 * processes per trial make it a sample over processes as well as over rounds. Every round uses a
 * new namespace on each target, so a namespace's cold start (its bound loading from PostgreSQL on
 * the cluster) is part of what is measured.
 */
export async function pairsTrials(options: PairsTrialsOptions): Promise<PairsTrial[]> {
  const out: PairsTrial[] = [];
  for (let t = 0; t < options.trials; t++) {
    // The same lease on both sides; short, so a shard moved by balance at start grants again soon.
    // Everything started is stopped in the `finally`, also when a later start fails.
    const started: ServerProcess[] = [];
    let cluster: BenchCluster | undefined;
    try {
      started.push(await startServerProcess({ leaseMs: 2_000 }));
      started.push(await startServerProcess({ leaseMs: 2_000 }));
      // Alternate which process is the baseline, so being started first favours neither.
      const [single, control] = t % 2 === 0 ? [started[0]!, started[1]!] : [started[1]!, started[0]!];
      cluster = await startCluster(3, ["--shards", "1", "--lease-ms", "2000"]);
      await stable(cluster, 3_000, 2_000);
      const targets = [single.url, control.url, cluster.members.map((m) => m.url)] as const;
      // New processes are slow at first: a server ran its first 2 s rounds after a 1 s warm-up at
      // 0.6 of its speed ten rounds later. Warm each for a few seconds before anything counts.
      for (const target of targets) await committers(target, options.callers, options.warmMs, "warm");
      const trial: PairsTrial = { clusterOverSingle: [], controlOverSingle: [] };
      for (let r = 0; r < options.rounds; r++) {
        const rates: number[] = [0, 0, 0];
        for (const i of ROUND_ORDERS[r % ROUND_ORDERS.length]!) {
          const run = await committers(targets[i]!, options.callers, options.ms, `t${t}r${r}`);
          rates[i] = run.pairs / run.elapsed;
        }
        trial.clusterOverSingle.push(rates[2]! / rates[0]!);
        trial.controlOverSingle.push(rates[1]! / rates[0]!);
      }
      options.progress(`trial ${t + 1}/${options.trials}: cluster/single ${trial.clusterOverSingle.map((x) => x.toFixed(3)).join(", ")}; control ${trial.controlOverSingle.map((x) => x.toFixed(3)).join(", ")}`);
      out.push(trial);
    } finally {
      await Promise.allSettled([cluster?.close(), ...started.map((s) => s.stop())]);
    }
  }
  return out;
}
