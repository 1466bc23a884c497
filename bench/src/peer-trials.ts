/**
 * `pnpm bench:peer-trials [trials] [rounds]`: leasehold_async against redlock, side by side, on
 * the two workloads issue 23 sets targets for: one caller's lock+unlock p50 (target ≤ 0.5×
 * redlock's) and 64 callers on 8 shared keys (target ≥ 1.5× redlock's pairs/s). Each trial starts
 * a new server process, warms both peers, then runs `rounds` (default 6) short slices (0.5 s) of
 * each workload on each peer, the order rotating every round, so that the load of a shared machine,
 * which moves within seconds, hits every peer alike; c1 pools the pairs of all slices (p50), the
 * contended figure is the median slice. It prints each trial's ratios and their medians.
 * A quicker, focused form of `pnpm bench peers` for measuring a change to the request path: no
 * etcd, no PostgreSQL, nothing written to the results. `LEASEHOLD_SERVER_NODE_ARGS` (space
 * separated) is passed to the server's node, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`.
 * `LEASEHOLD_BASELINE_CLI=<another build's packages/server/dist/cli.js>` also runs leasehold_async
 * against a server of that build in the same rounds (`baseline`), for an A/B of a server change.
 * `LEASEHOLD_BASELINE_CLIENT=<another build's packages/client/dist/index.js>` makes the baseline
 * use that build's `LockClient`, for an A/B of a client change; without `LEASEHOLD_BASELINE_CLI` it
 * then talks to the same server process as leasehold_async, so the server's own speed (which
 * differs from one process to the next on a shared machine) cancels out. For a baseline, the
 * contended line also gives the mean rate over all slices (pairs over time), steadier than the
 * median slice when the machine's load swings.
 */
import { leaseholdPeer, type LockClientClass } from "./peers/leasehold-peer.js";
import type { PeerDriver } from "./peers/peer.js";
import { openRedlockPeer } from "./peers/redlock-peer.js";
import { runRound, type PeerWorkload } from "./peers/workloads.js";
import { startServerProcess } from "./server-process.js";
import { quantile } from "./stats.js";
import { pathToFileURL } from "node:url";

const trials = Number(process.argv[2] ?? 3);
const rounds = Number(process.argv[3] ?? 6);
const SLICE_MS = 500;
const nodeArgs = (process.env.LEASEHOLD_SERVER_NODE_ARGS ?? "").split(" ").filter((a) => a !== "");
const baselineCli = process.env.LEASEHOLD_BASELINE_CLI;
const baselineClientModule = process.env.LEASEHOLD_BASELINE_CLIENT;
const baselineClient: LockClientClass | undefined =
  baselineClientModule === undefined ? undefined : ((await import(pathToFileURL(baselineClientModule).href)) as { LockClient: LockClientClass }).LockClient;
const hasBaseline = baselineCli !== undefined || baselineClient !== undefined;

/** One slice of `workload` on `driver`: the pairs' durations in µs (c1), and the pairs per second. */
async function slice(driver: PeerDriver, workload: PeerWorkload, ms: number): Promise<{ pairUs: number[]; rate: number }> {
  const session = await driver.session();
  const result = await runRound(session, workload, ms, { pairs: workload === "c1", waits: false });
  await session.end();
  return { pairUs: result.pairUs, rate: result.pairs / result.seconds };
}

/** The mean of `values` (0 when empty). */
const mean = (values: readonly number[]): number => (values.length === 0 ? 0 : values.reduce((a, b) => a + b, 0) / values.length);

/** Per driver, the mean slice rate of the last {@link measure} of a throughput workload. */
const meanRates = new Map<string, number>();

/** `rounds` slices of `workload` on each driver, rotating the order: per driver, c1's pooled p50 (µs) or the median rate. */
async function measure(drivers: readonly PeerDriver[], workload: PeerWorkload): Promise<Map<string, number>> {
  const pooled = new Map<string, number[]>(drivers.map((d) => [d.name, []]));
  for (let r = 0; r < rounds; r++) {
    for (let i = 0; i < drivers.length; i++) {
      const driver = drivers[(i + r) % drivers.length]!;
      const { pairUs, rate } = await slice(driver, workload, SLICE_MS);
      if (workload === "c1") pooled.get(driver.name)!.push(...pairUs);
      else pooled.get(driver.name)!.push(rate);
    }
  }
  if (workload !== "c1") for (const [name, values] of pooled) meanRates.set(name, mean(values));
  return new Map([...pooled].map(([name, values]) => [name, quantile(values, 0.5)]));
}

const redlock = await openRedlockPeer();
const c1Ratios: number[] = [];
const contendedRatios: number[] = [];
const baselineC1Ratios: number[] = [];
const baselineContendedRatios: number[] = [];
/** Per trial, this build's mean contended rate over the baseline's (1 when they are alike). */
const meanRateRatios: number[] = [];
try {
  for (let t = 0; t < trials; t++) {
    const server = await startServerProcess({ nodeArgs });
    const baselineServer = baselineCli === undefined ? undefined : await startServerProcess({ cli: baselineCli });
    try {
      const leasehold = leaseholdPeer("leasehold_async", server.url, "try", true);
      // The baseline build's driver is told apart by its name in the maps below.
      const baselineUrl = baselineServer?.url ?? server.url;
      const baseline: PeerDriver | undefined = hasBaseline ? { ...leaseholdPeer("leasehold_sync", baselineUrl, "try", true, baselineClient), name: "leasehold_sync" } : undefined;
      const base = t % 2 === 0 ? [leasehold, redlock.driver] : [redlock.driver, leasehold];
      const order = baseline === undefined ? base : t % 2 === 0 ? [...base, baseline] : [baseline, ...base];
      for (const d of order) for (const w of ["c1", "contended"] as const) await slice(d, w, 1_500);
      const c1 = await measure(order, "c1");
      const contended = await measure(order, "contended");
      const c1Ratio = c1.get("leasehold_async")! / c1.get("redlock")!;
      const contendedRatio = contended.get("leasehold_async")! / contended.get("redlock")!;
      c1Ratios.push(c1Ratio);
      contendedRatios.push(contendedRatio);
      if (baseline !== undefined) {
        baselineC1Ratios.push(c1.get("leasehold_sync")! / c1.get("redlock")!);
        baselineContendedRatios.push(contended.get("leasehold_sync")! / contended.get("redlock")!);
        meanRateRatios.push(meanRates.get("leasehold_async")! / meanRates.get("leasehold_sync")!);
        console.log(
          `  baseline build: c1 p50 ${c1.get("leasehold_sync")!.toFixed(0)} µs, ratio ${baselineC1Ratios.at(-1)!.toFixed(2)}; contended ${Math.round(contended.get("leasehold_sync")!)} pairs/s, ratio ${baselineContendedRatios.at(-1)!.toFixed(2)}; ` +
            `contended mean over the slices: this build ${Math.round(meanRates.get("leasehold_async")!)}, baseline ${Math.round(meanRates.get("leasehold_sync")!)} pairs/s`,
        );
      }
      console.log(
        `trial ${t + 1}/${trials}: c1 p50 leasehold ${c1.get("leasehold_async")!.toFixed(0)} µs, redlock ${c1.get("redlock")!.toFixed(0)} µs, ratio ${c1Ratio.toFixed(2)}; ` +
          `contended leasehold ${Math.round(contended.get("leasehold_async")!)} pairs/s, redlock ${Math.round(contended.get("redlock")!)}, ratio ${contendedRatio.toFixed(2)}`,
      );
    } finally {
      await server.stop();
      await baselineServer?.stop();
    }
  }
} finally {
  await redlock.close();
}
if (hasBaseline) {
  console.log(`baseline build: median c1 p50 ratio ${quantile(baselineC1Ratios, 0.5).toFixed(2)}; median contended ratio ${quantile(baselineContendedRatios, 0.5).toFixed(2)}`);
  console.log(`this build's mean contended rate over the baseline's, per trial: ${meanRateRatios.map((r) => r.toFixed(2)).join(", ")} (median ${quantile(meanRateRatios, 0.5).toFixed(2)})`);
}
console.log(`median c1 p50 ratio leasehold/redlock ${quantile(c1Ratios, 0.5).toFixed(2)} (target <= 0.5); median contended ratio ${quantile(contendedRatios, 0.5).toFixed(2)} (target >= 1.5)`);
