import { floorTrials } from "../cluster-floor-trials.js";
import type { Suite } from "../figures.js";
import { quantile, round } from "../stats.js";

/**
 * The floor of a standby's cost (issue 21): a cluster whose standby is a bare echo server, beside
 * the same cluster with its real standby and a single server, in one run (cluster-floor-trials.ts).
 * Needs PostgreSQL like `cluster`; only runs when named (`pnpm bench cluster-floor`).
 */
export const clusterFloorSuite: Suite = {
  name: "cluster-floor",
  description: "the floor of a standby's cost on this machine: a cluster whose standby is a bare echo server, beside the real standby and a single server",
  defaultOn: false,
  async run(ctx) {
    const base = { command: ctx.command, quick: ctx.quick };
    const trials = ctx.quick ? 1 : 4;
    const rounds = ctx.quick ? 1 : 6;
    const ms = ctx.quick ? 1_000 : 2_000;
    const c1Ms = ctx.quick ? 1_000 : 3_000;
    const runs = await floorTrials({ trials, rounds, ms, warmMs: ctx.quick ? 1_000 : 3_000, c1Ms, progress: ctx.progress });
    const all = (f: (t: (typeof runs)[number]) => number[]): number[] => runs.flatMap(f);
    const echo = all((t) => t.echoOverSingle);
    const real = all((t) => t.standbyOverSingle);
    const c1Echo = runs.map((t) => t.c1P50Us.echo / t.c1P50Us.single);
    const c1Real = runs.map((t) => t.c1P50Us.standby / t.c1P50Us.single);
    const med = (f: (t: (typeof runs)[number]) => number): number => quantile(runs.map(f), 0.5);
    const list = (xs: readonly number[]): string => xs.map((x) => x.toFixed(2)).join(", ");
    const rates = `median pairs/s single ${Math.round(quantile(all((t) => t.rates.single), 0.5))}, echo ${Math.round(quantile(all((t) => t.rates.echo), 0.5))}, real standby ${Math.round(quantile(all((t) => t.rates.standby), 0.5))}`;
    const trips = `mean round trip of a replication message during the rounds, as the leader measured it (median of trials): to the echo server ${Math.round(med((t) => t.c64AckUs.echo))} µs, to the real standby ${Math.round(med((t) => t.c64AckUs.standby))} µs`;
    const cpu = `CPU µs per pair (median of trials): single ${med((t) => t.cpuUsPerPair.single).toFixed(1)}, echo cluster's leader ${med((t) => t.cpuUsPerPair.echoLeader).toFixed(1)}, real cluster's leader ${med((t) => t.cpuUsPerPair.standbyLeader).toFixed(1)} and standby ${med((t) => t.cpuUsPerPair.standby).toFixed(1)}`;
    const c1 = `p50 lock call (median of trials) single ${Math.round(med((t) => t.c1P50Us.single))} µs, echo ${Math.round(med((t) => t.c1P50Us.echo))} µs, real standby ${Math.round(med((t) => t.c1P50Us.standby))} µs; mean round trip of a replication message as the leader measured it, to the echo server ${Math.round(med((t) => t.c1AckUs.echo))} µs, to the real standby ${Math.round(med((t) => t.c1AckUs.standby))} µs`;
    const shape = `${trials} trials × ${rounds} rounds of ${ms / 1000} s`;
    // `quantile(xs, 0.5)` is by nearest rank: with an even count, the lower of the two middle values.
    return [
      { name: "cluster_floor_c64_echo_over_single", value: round(quantile(echo, 0.5), 3), unit: "ratio", ...base, note: `lower median of ${echo.length} rounds (${list(echo)}), ${shape}; ${rates}; ${trips}; ${cpu}` },
      { name: "cluster_floor_c64_standby_over_single", value: round(quantile(real, 0.5), 3), unit: "ratio", ...base, note: `the same rounds, the real standby (${list(real)})` },
      { name: "cluster_floor_c1_echo_over_single", value: round(quantile(c1Echo, 0.5), 2), unit: "ratio", ...base, note: `median of ${trials} trials' p50 ratios (${list(c1Echo)}), ${c1Ms / 1000} s of one caller per target; ${c1}` },
      { name: "cluster_floor_c1_standby_over_single", value: round(quantile(c1Real, 0.5), 2), unit: "ratio", ...base, note: `the same trials, the real standby (${list(c1Real)})` },
    ];
  },
};
