import { inSync, startCluster, stable, type BenchCluster } from "./bench-cluster.js";
import { oneCaller } from "./cluster-pairs-trials.js";
import { startEchoServer, type EchoServerProcess } from "./echo-server-process.js";
import { fetchMetrics } from "./metrics-text.js";
import { cpuMs } from "./process-cpu.js";
import { startServerProcess, type ServerProcess } from "./server-process.js";
import { quantile } from "./stats.js";
import { committers } from "./suites/client.js";

/** What one floor trial measured; every ratio is over the single server of the same round. */
export interface FloorTrial {
  /** c64 lock+tryUnlock pairs/s of the cluster whose standby is the echo server, over the single server's, per round. */
  readonly echoOverSingle: number[];
  /** The same for the cluster with its real standby, per round. */
  readonly standbyOverSingle: number[];
  /** c64 pairs/s of each target, per round. */
  readonly rates: { readonly single: number[]; readonly echo: number[]; readonly standby: number[] };
  /** One caller's p50 lock call (µs) of each target, once per trial. */
  readonly c1P50Us: { readonly single: number; readonly echo: number; readonly standby: number };
  /**
   * Mean round trip (µs) of a replication message as each cluster's leader measured it during the
   * one-caller run (`leasehold_replication_ack_seconds`): to the echo server, and to the real standby.
   */
  readonly c1AckUs: { readonly echo: number; readonly standby: number };
  /** The same mean round trip (µs) during the c64 rounds, when the machine's two CPUs are busy. */
  readonly c64AckUs: { readonly echo: number; readonly standby: number };
  /** CPU per c64 pair (µs) of the single server and of each cluster's leader, over the rounds. */
  readonly cpuUsPerPair: { readonly single: number; readonly echoLeader: number; readonly standbyLeader: number; readonly standby: number };
}

/** How {@link floorTrials} measures. */
export interface FloorTrialsOptions {
  readonly trials: number;
  readonly rounds: number;
  /** Length of one target's c64 run in a round (ms). */
  readonly ms: number;
  /** How long each target is driven before the first round, per trial (ms). */
  readonly warmMs: number;
  /** Length of each target's one-caller run, once per trial after the rounds (ms). */
  readonly c1Ms: number;
  readonly progress: (message: string) => void;
}

/** Replication messages acknowledged and the sum of their round trips (s), as a leader counted them. */
interface Acks {
  readonly sum: number;
  readonly count: number;
}

/** A leader's `leasehold_replication_ack_seconds` sum and count so far. */
async function acksSoFar(url: string): Promise<Acks> {
  const metrics = await fetchMetrics(url);
  const read = (series: string): number => {
    const value = metrics.value(series);
    if (value === undefined) throw new Error(`${url}/metrics has no ${series}`);
    return value;
  };
  return { sum: read("leasehold_replication_ack_seconds_sum"), count: read("leasehold_replication_ack_seconds_count") };
}

/** Run `work` and answer its result with the acknowledgements the leader at `url` counted meanwhile (none without a leader: the single server). */
async function countingAcks<T>(url: string | null, work: () => Promise<T>): Promise<{ readonly result: T; readonly acks: Acks }> {
  const before = url === null ? null : await acksSoFar(url);
  const result = await work();
  if (url === null || before === null) return { result, acks: { sum: 0, count: 0 } };
  const after = await acksSoFar(url);
  return { result, acks: { sum: after.sum - before.sum, count: after.count - before.count } };
}

/** Mean round trip of `acks`, in µs. */
const meanUs = (acks: Acks): number => (acks.sum / acks.count) * 1e6;

/** The order of the three targets (0 single, 1 echo floor, 2 real standby) in round `r mod 3`: a Latin square. */
const ORDERS: readonly (readonly number[])[] = [
  [0, 1, 2],
  [1, 2, 0],
  [2, 0, 1],
];

/** Opens the test knobs (the echo standby is read at any log level: a debug access log would change what is measured). */
const KNOB_ARGS = ["--unsafe-test-knobs"] as const;

/**
 * The floor of what a standby costs on this machine (issue 21's cost targets), side by side in one
 * run: a single server; a 3-server cluster (`--shards 1 --replicas 1`) whose leader's replication
 * connection goes to a TCP echo server in a process of its own (`LEASEHOLD_TEST_ECHO_STANDBY_PORT`,
 * echo-replication-transport.ts: every message costs one byte there and back and nothing else, no
 * encoding, no MAC, no standby applying entries; the leader's own side, entries built and answers
 * held, is unchanged); and the same cluster with its real standby. What the echo cluster pays over
 * the single server is the price of waiting for another process at all, which no standby design
 * can undercut on the same machine; what the real one pays beyond the echo one is encoding,
 * authenticating and applying. Each trial starts every process anew; rounds of c64
 * lock+tryUnlock run the three targets in a Latin-square order; then one caller per target.
 */
export async function floorTrials(options: FloorTrialsOptions): Promise<FloorTrial[]> {
  const out: FloorTrial[] = [];
  for (let t = 0; t < options.trials; t++) {
    let echoServer: EchoServerProcess | null = null;
    let single: ServerProcess | null = null;
    const clusters: BenchCluster[] = [];
    try {
      echoServer = await startEchoServer();
      single = await startServerProcess({ leaseMs: 2_000, extraArgs: KNOB_ARGS });
      const flags = ["--shards", "1", "--lease-ms", "2000", "--replicas", "1"];
      const echo = await startCluster(3, flags, { extraArgs: KNOB_ARGS, env: { LEASEHOLD_TEST_ECHO_STANDBY_PORT: String(echoServer.port) } });
      clusters.push(echo);
      const real = await startCluster(3, flags, { extraArgs: KNOB_ARGS });
      clusters.push(real);
      await Promise.all([stable(echo, 3_000, 2_000), stable(real, 3_000, 2_000)]);
      const [echoRow] = await inSync(echo, 30_000);
      const [realRow] = await inSync(real, 30_000);
      const urls = (c: BenchCluster): string[] => c.members.map((m) => m.url);
      const targets = [single.url, urls(echo), urls(real)] as const;
      const [echoLeader, realLeader] = [echo.member(echoRow!.holder), real.member(realRow!.holder)];
      const pids = [[single.child.pid!], [echoLeader.child.pid!], [realLeader.child.pid!, real.member(realRow!.standbyId).child.pid!]] as const;
      const leaderUrls = [null, echoLeader.url, realLeader.url] as const;
      for (const target of targets) await committers(target, 64, options.warmMs, "warm");
      const rates = { single: [] as number[], echo: [] as number[], standby: [] as number[] };
      const cpu = [[0], [0], [0, 0]];
      const pairs = [0, 0, 0];
      const acks64 = [{ sum: 0, count: 0 }, { sum: 0, count: 0 }, { sum: 0, count: 0 }];
      for (let r = 0; r < options.rounds; r++) {
        const rate = [0, 0, 0];
        for (const i of ORDERS[r % ORDERS.length]!) {
          const before = pids[i]!.map(cpuMs);
          const { result: run, acks } = await countingAcks(leaderUrls[i]!, () => committers(targets[i]!, 64, options.ms, `t${t}r${r}`));
          pids[i]!.forEach((p, k) => (cpu[i]![k]! += cpuMs(p) - before[k]!));
          acks64[i]!.sum += acks.sum;
          acks64[i]!.count += acks.count;
          pairs[i]! += run.pairs;
          rate[i] = run.pairs / run.elapsed;
        }
        rates.single.push(rate[0]!);
        rates.echo.push(rate[1]!);
        rates.standby.push(rate[2]!);
      }
      const c1 = [0, 0, 0];
      const ack = [0, 0, 0];
      for (const i of ORDERS[t % ORDERS.length]!) {
        const { result: times, acks } = await countingAcks(leaderUrls[i]!, () => oneCaller(targets[i]!, options.c1Ms, `t${t}c1`));
        c1[i] = quantile(times, 0.5);
        ack[i] = meanUs(acks);
      }
      const perPair = (i: number, k: number): number => (cpu[i]![k]! * 1000) / pairs[i]!;
      const trial: FloorTrial = {
        echoOverSingle: rates.echo.map((x, r) => x / rates.single[r]!),
        standbyOverSingle: rates.standby.map((x, r) => x / rates.single[r]!),
        rates,
        c1P50Us: { single: c1[0]!, echo: c1[1]!, standby: c1[2]! },
        c1AckUs: { echo: ack[1]!, standby: ack[2]! },
        c64AckUs: { echo: meanUs(acks64[1]!), standby: meanUs(acks64[2]!) },
        cpuUsPerPair: { single: perPair(0, 0), echoLeader: perPair(1, 0), standbyLeader: perPair(2, 0), standby: perPair(2, 1) },
      };
      const fmt = (xs: number[]): string => xs.map((x) => x.toFixed(3)).join(", ");
      options.progress(
        `floor trial ${t + 1}/${options.trials}: c64 echo/single ${fmt(trial.echoOverSingle)}; standby/single ${fmt(trial.standbyOverSingle)}; c1 p50 single ${Math.round(c1[0]!)}, echo ${Math.round(c1[1]!)}, standby ${Math.round(c1[2]!)} µs (round trip to the echo ${Math.round(ack[1]!)}, to the standby ${Math.round(ack[2]!)} µs); c64 round trip to the echo ${Math.round(trial.c64AckUs.echo)}, to the standby ${Math.round(trial.c64AckUs.standby)} µs; CPU µs/pair single ${trial.cpuUsPerPair.single.toFixed(1)}, echo leader ${trial.cpuUsPerPair.echoLeader.toFixed(1)}, leader ${trial.cpuUsPerPair.standbyLeader.toFixed(1)}, standby ${trial.cpuUsPerPair.standby.toFixed(1)}`,
      );
      out.push(trial);
    } finally {
      await Promise.allSettled([...clusters.map((c) => c.close()), single?.stop(), echoServer?.stop()]);
    }
  }
  return out;
}
