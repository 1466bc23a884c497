import type { Figure, SuiteContext } from "./figures.js";
import { SAME_PROMISE_SETUPS, SETUP_ROLES } from "./same-promise-setups.js";
import { perRound, samePromiseTrials } from "./same-promise-trials.js";
import { quantile, round } from "./stats.js";

const list = (xs: readonly number[], digits = 0): string => xs.map((x) => x.toFixed(digits)).join(", ");

/**
 * Issue 32's side-by-side figures: c64 pairs/s, one caller's p50 lock call and server CPU per pair
 * at a paced 8,000 pairs/s, for the single server, the cluster with `--replicas 0` and `1`, the
 * echo floor and the two floors of an authenticating standby, Redis primary + replica and etcd
 * (skipped, and said so, when not installed). Quick: 1 trial of 1 round of 1 s; full: 3 trials of
 * 5 rounds of 2 s, the setups' order rotating by one each round.
 */
export async function samePromiseFigures(ctx: SuiteContext): Promise<Figure[]> {
  const base = { command: ctx.command, quick: ctx.quick };
  const options = {
    trials: ctx.quick ? 1 : 3,
    rounds: ctx.quick ? 1 : 5,
    ms: ctx.quick ? 1_000 : 2_000,
    warmMs: ctx.quick ? 500 : 3_000,
    c1Ms: ctx.quick ? 500 : 2_000,
    pacedMs: ctx.quick ? 1_000 : 3_000,
    pacedRate: 8_000,
    progress: ctx.progress,
  };
  const run = await samePromiseTrials(options);
  for (const skip of run.skips) ctx.progress(`same promise: ${skip.name} skipped: ${skip.reason}`);
  const how = `${options.trials} trials (new processes each) × ${options.rounds} rounds of ${options.ms / 1000} s, setups in a rotating order`;
  const figures: Figure[] = [];
  for (const setup of SAME_PROMISE_SETUPS) {
    const m = run.measures.get(setup);
    if (m === undefined) continue;
    const extra = setup === "redis_replica" ? `; grants not counted because WAIT 1 answered 0: ${m.unreplicated}` : "";
    figures.push(
      { name: `same_promise_pairs_per_s_c64_${setup}`, value: round(quantile(m.c64, 0.5), 0), unit: "pairs/s", ...base, note: `64 callers on 4 keys each, median of ${m.c64.length} rounds (${list(m.c64)}), ${how}${extra}` },
      { name: `same_promise_c1_p50_us_${setup}`, value: round(quantile(m.c1P50Us, 0.5), 0), unit: "µs", ...base, note: `one caller, lock + awaited unlock for ${options.c1Ms / 1000} s per trial: p50 lock call per trial ${list(m.c1P50Us)}` },
    );
    SETUP_ROLES[setup].forEach((role, k) => {
      const perTrial = m.cpuUsPerPair[k]!;
      figures.push({ name: `same_promise_cpu_us_per_pair_${setup}_${role}`, value: round(quantile(perTrial, 0.5), 2), unit: "µs", ...base, note: `paced to ${options.pacedRate} pairs/s for ${options.pacedMs / 1000} s per trial; per trial ${list(perTrial, 2)}; pairs/s kept ${list(m.pacedPairsPerS)}` });
    });
  }
  // Ratios of c64 pairs/s in the same round, the median of the rounds.
  for (const [name, a, b] of [
    ["same_promise_c64_ratio_cluster_r1_over_redis_replica", "cluster_r1", "redis_replica"],
    ["same_promise_c64_ratio_echo_over_redis_replica", "cluster_echo", "redis_replica"],
    ["same_promise_c64_ratio_cluster_r1_over_echo", "cluster_r1", "cluster_echo"],
  ] as const) {
    const ratios = perRound(run, a, b);
    if (ratios.length > 0) figures.push({ name, value: round(quantile(ratios, 0.5), 3), unit: "ratio", ...base, note: `per round, same round: ${list(ratios, 3)}` });
  }
  const single = run.measures.get("single")?.cpuUsPerPair[0];
  const r1 = run.measures.get("cluster_r1");
  const echo = run.measures.get("cluster_echo");
  if (single !== undefined && r1 !== undefined && echo !== undefined) {
    const over = (xs: readonly number[]): number[] => xs.map((x, t) => x / single[t]!);
    const leader = over(r1.cpuUsPerPair[0]!);
    const standby = over(r1.cpuUsPerPair[1]!);
    const echoLeader = over(echo.cpuUsPerPair[0]!);
    const echoStandby = over(echo.cpuUsPerPair[1]!);
    const c1Gap = r1.c1P50Us.map((x, t) => x - echo.c1P50Us[t]!);
    figures.push(
      { name: "same_promise_cpu_ratio_leader_over_single", value: round(quantile(leader, 0.5), 3), unit: "ratio", ...base, note: `per trial ${list(leader, 3)}` },
      { name: "same_promise_cpu_ratio_echo_leader_over_single", value: round(quantile(echoLeader, 0.5), 3), unit: "ratio", ...base, note: `per trial ${list(echoLeader, 3)}` },
      { name: "same_promise_cpu_ratio_standby_over_single", value: round(quantile(standby, 0.5), 3), unit: "ratio", ...base, note: `per trial ${list(standby, 3)}` },
      { name: "same_promise_cpu_ratio_echo_over_single", value: round(quantile(echoStandby, 0.5), 3), unit: "ratio", ...base, note: `per trial ${list(echoStandby, 3)}` },
      { name: "same_promise_c1_p50_us_cluster_r1_minus_echo", value: round(quantile(c1Gap, 0.5), 0), unit: "µs", ...base, note: `per trial, same trial: ${list(c1Gap)}` },
    );
    // The floors of a standby that authenticates every frame, beside the echo floor's, in the same trials and rounds.
    for (const floor of ["auth", "decode"] as const) {
      const m = run.measures.get(`cluster_${floor}`);
      if (m === undefined) continue;
      const standbyRatio = over(m.cpuUsPerPair[1]!);
      const c64 = perRound(run, `cluster_${floor}`, "cluster_echo");
      const gap = m.c1P50Us.map((x, t) => x - echo.c1P50Us[t]!);
      figures.push(
        { name: `same_promise_cpu_ratio_${floor}_over_single`, value: round(quantile(standbyRatio, 0.5), 3), unit: "ratio", ...base, note: `per trial ${list(standbyRatio, 3)}` },
        { name: `same_promise_c64_ratio_${floor}_over_echo`, value: round(quantile(c64, 0.5), 3), unit: "ratio", ...base, note: `per round, same round: ${list(c64, 3)}` },
        { name: `same_promise_c1_p50_us_${floor}_minus_echo`, value: round(quantile(gap, 0.5), 0), unit: "µs", ...base, note: `per trial, same trial: ${list(gap)}` },
      );
    }
  }
  return figures;
}
