import { LockClient } from "@leasehold/client";
import { inSync, startCluster, stable, type BenchCluster } from "./bench-cluster.js";
import { cpuMs } from "./process-cpu.js";
import { startServerProcess, type ServerProcess } from "./server-process.js";
import { silentLogger } from "./silent-logger.js";
import { nowMs, quantile } from "./stats.js";
import { committers } from "./suites/client.js";

/** What one trial measured; every ratio is over the single server, one per round. */
export interface PairsTrial {
  /** The cluster with a standby (`--replicas 1`, in sync): its rate over the single server's. */
  readonly clusterOverSingle: number[];
  /** The cluster without a standby (`--replicas 0`): its rate over the single server's. */
  readonly noStandbyOverSingle: number[];
  /** The second single server's rate over the first's (the control). */
  readonly controlOverSingle: number[];
  /** One caller: the cluster with a standby's p50 lock call over the single server's (one value per trial). */
  readonly c1P50OverSingle: number;
  /** One caller: the p50 lock call (µs) of the single server and of the cluster with a standby. */
  readonly c1P50Us: { readonly single: number; readonly cluster: number };
  /** CPU per grant (µs) over the c64 rounds: the single server, the leader and the standby of the cluster with a standby. */
  readonly cpuUsPerGrant: { readonly single: number; readonly leader: number; readonly standby: number };
  /** Rounds after which the cluster's row no longer said in sync (its ratio would not be of the cluster with a standby). */
  readonly outOfSyncRounds: number;
}

/** How {@link pairsTrials} measures. */
export interface PairsTrialsOptions {
  /** Trials, each with new server processes. */
  readonly trials: number;
  /** Rounds per trial; each round runs all four targets, in the order {@link ROUND_ORDERS} gives. */
  readonly rounds: number;
  /** Length of one target's run in a round (ms). */
  readonly ms: number;
  /** How long each target is driven before the first round, per trial (ms). */
  readonly warmMs: number;
  /** Callers doing lock+tryUnlock at once. */
  readonly callers: number;
  /** Length of each target's one-caller run, once per trial after the rounds (ms). */
  readonly c1Ms: number;
  readonly progress: (message: string) => void;
}

/**
 * The order of the four targets (0 the single server, 1 the control, 2 the cluster with a standby,
 * 3 the cluster without) in round `r mod 4`: a Williams square, so every target runs in every
 * position once and follows every other target once in four rounds, and a drift of the machine
 * within a trial favours none of them.
 */
export const ROUND_ORDERS: readonly (readonly number[])[] = [
  [0, 1, 3, 2],
  [1, 2, 0, 3],
  [2, 3, 1, 0],
  [3, 0, 2, 1],
];

/**
 * Lock call times (µs) of one caller doing lock + awaited unlock for `ms`. Awaited, not tryUnlock:
 * a lone caller's lock right after a tryUnlock took about 8 ms at the median here (0.5 ms after an
 * awaited unlock, same server), a client-side delay that would hide what the server path costs.
 */
export async function oneCaller(target: string | readonly string[], ms: number, namespace: string): Promise<number[]> {
  const where = typeof target === "string" ? { baseUrl: target } : { baseUrls: [...target] };
  const client = LockClient.http({ ...where, namespace, logger: silentLogger() });
  const times: number[] = [];
  const end = nowMs() + ms;
  for (let n = 0; nowMs() < end; n++) {
    const t0 = nowMs();
    const res = await client.lock([{ descriptor: `c1-k${n % 256}`, mode: "exclusive" }], { acquireTimeoutMs: 5_000 });
    times.push((nowMs() - t0) * 1000);
    if (res.status !== "acquired") throw new Error("lock on the caller's own key was not granted within 5 s");
    await client.unlock([res.token]);
  }
  await client.close();
  return times;
}

/**
 * Lock+tryUnlock throughput of 3-server clusters (`--shards 1`: one leader, once leadership has
 * stopped moving), one with a standby in sync and one without, against a single server, with a
 * control: a second single server against the first. Each trial starts all of them anew, because
 * on this machine a server process carries a speed of its own for its whole life (two identical
 * servers measured side by side for 16 rounds came out 3.5% apart): with one process per side the
 * ratio would carry that one draw. Every round uses a new namespace on each target, so a
 * namespace's cold start (its bound loading from PostgreSQL on the cluster) is part of what is
 * measured. After the rounds, one caller per target gives the c1 lock call latency; the CPU each
 * process used during the c64 rounds (`/proc/<pid>/stat`) over the grants it made gives CPU per grant.
 */
export async function pairsTrials(options: PairsTrialsOptions): Promise<PairsTrial[]> {
  const out: PairsTrial[] = [];
  for (let t = 0; t < options.trials; t++) {
    // The same lease on all sides; short, so a shard moved by balance at start grants again soon.
    // Everything started is stopped in the `finally`, also when a later start fails.
    const started: ServerProcess[] = [];
    const clusters: BenchCluster[] = [];
    try {
      started.push(await startServerProcess({ leaseMs: 2_000 }));
      started.push(await startServerProcess({ leaseMs: 2_000 }));
      // Alternate which process is the baseline, so being started first favours neither.
      const [single, control] = t % 2 === 0 ? [started[0]!, started[1]!] : [started[1]!, started[0]!];
      const withStandby = await startCluster(3, ["--shards", "1", "--lease-ms", "2000", "--replicas", "1"]);
      clusters.push(withStandby);
      const noStandby = await startCluster(3, ["--shards", "1", "--lease-ms", "2000", "--replicas", "0"]);
      clusters.push(noStandby);
      await Promise.all([stable(withStandby, 3_000, 2_000), stable(noStandby, 3_000, 2_000)]);
      const [row] = await inSync(withStandby, 30_000);
      const pidOf = (serverId: string | null): number => withStandby.member(serverId).child.pid!;
      const leaderPid = pidOf(row!.holder);
      const standbyPid = pidOf(row!.standbyId);
      const urls = (c: BenchCluster): string[] => c.members.map((m) => m.url);
      const targets = [single.url, control.url, urls(withStandby), urls(noStandby)] as const;
      // New processes are slow at first: a server ran its first 2 s rounds after a 1 s warm-up at
      // 0.6 of its speed ten rounds later. Warm each for a few seconds before anything counts.
      for (const target of targets) await committers(target, options.callers, options.warmMs, "warm");
      const trial = { clusterOverSingle: [] as number[], noStandbyOverSingle: [] as number[], controlOverSingle: [] as number[], outOfSyncRounds: 0 };
      const cpu = { single: 0, leader: 0, standby: 0, singleGrants: 0, clusterGrants: 0 };
      for (let r = 0; r < options.rounds; r++) {
        const rates: number[] = [0, 0, 0, 0];
        for (const i of ROUND_ORDERS[r % ROUND_ORDERS.length]!) {
          const pids = i === 0 ? [single.child.pid!] : i === 2 ? [leaderPid, standbyPid] : [];
          const before = pids.map(cpuMs);
          const run = await committers(targets[i]!, options.callers, options.ms, `t${t}r${r}`);
          const used = pids.map((p, k) => cpuMs(p) - before[k]!);
          rates[i] = run.pairs / run.elapsed;
          if (i === 0) {
            cpu.single += used[0]!;
            cpu.singleGrants += run.pairs;
          } else if (i === 2) {
            cpu.leader += used[0]!;
            cpu.standby += used[1]!;
            cpu.clusterGrants += run.pairs;
            if (!(await withStandby.rows())[0]!.inSync) trial.outOfSyncRounds++;
          }
        }
        trial.clusterOverSingle.push(rates[2]! / rates[0]!);
        trial.noStandbyOverSingle.push(rates[3]! / rates[0]!);
        trial.controlOverSingle.push(rates[1]! / rates[0]!);
      }
      const c1: number[] = [0, 0, 0, 0];
      for (const i of ROUND_ORDERS[t % ROUND_ORDERS.length]!) c1[i] = quantile(await oneCaller(targets[i]!, options.c1Ms, `t${t}c1`), 0.5);
      const done: PairsTrial = {
        ...trial,
        c1P50OverSingle: c1[2]! / c1[0]!,
        c1P50Us: { single: c1[0]!, cluster: c1[2]! },
        cpuUsPerGrant: { single: (cpu.single * 1000) / cpu.singleGrants, leader: (cpu.leader * 1000) / cpu.clusterGrants, standby: (cpu.standby * 1000) / cpu.clusterGrants },
      };
      const fmt = (xs: number[]): string => xs.map((x) => x.toFixed(3)).join(", ");
      options.progress(
        `trial ${t + 1}/${options.trials}: standby/single ${fmt(done.clusterOverSingle)}; no standby/single ${fmt(done.noStandbyOverSingle)}; control ${fmt(done.controlOverSingle)}; c1 p50 ${Math.round(c1[0]!)} / ${Math.round(c1[2]!)} µs; CPU µs/grant single ${done.cpuUsPerGrant.single.toFixed(1)}, leader ${done.cpuUsPerGrant.leader.toFixed(1)}, standby ${done.cpuUsPerGrant.standby.toFixed(1)}${done.outOfSyncRounds > 0 ? `; OUT OF SYNC after ${done.outOfSyncRounds} rounds` : ""}`,
      );
      out.push(done);
    } finally {
      await Promise.allSettled([...clusters.map((c) => c.close()), ...started.map((s) => s.stop())]);
    }
  }
  return out;
}
