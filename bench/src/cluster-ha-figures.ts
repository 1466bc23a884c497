import { crashTrials, HA_LEADER_LEASE_MS, rollingRestart } from "./cluster-ha-trials.js";
import { pairsTrials } from "./cluster-pairs-trials.js";
import type { Figure, SuiteContext } from "./figures.js";
import { quantile, round } from "./stats.js";

const list = (xs: readonly number[], digits = 0): string => xs.map((x) => x.toFixed(digits)).join(", ");

/**
 * Issue 21's figures of locks that outlive their leader: a rolling restart under load, SIGKILL of a
 * leader with an in-sync standby, and the same without a standby (`--replicas 0`) against its bound.
 */
export async function survivalFigures(ctx: SuiteContext): Promise<Figure[]> {
  const base = { command: ctx.command, quick: ctx.quick };
  const figures: Figure[] = [];
  const perNamespace = 20;

  // Each group runs on its own: a failed group (a cluster that did not settle) costs its figures, not the others'.
  const attempt = async <T>(what: string, run: () => Promise<T>): Promise<T | null> => {
    try {
      return await run();
    } catch (err) {
      ctx.progress(`${what} failed, its figures are left out: ${(err as Error).message.slice(0, 400)}`);
      return null;
    }
  };
  const rolling = await attempt("rolling restart", () => rollingRestart({ rounds: ctx.quick ? 1 : 2, perNamespace, progress: ctx.progress }));
  const restarts = rolling?.readyMs.length ?? 0;
  if (rolling !== null) figures.push(
    { name: "rolling_restart_locks_lost", value: rolling.lost, unit: "locks", ...base, note: `${rolling.held} locks held (${perNamespace} in each of 3 namespaces, one per shard) through ${restarts} SIGTERM + restarts of a 3-server cluster (--shards 3, --replicas 1, default leases); lost = not returned by a refresh afterwards or reported on lostLocks (reported: ${JSON.stringify(rolling.reasons)})` },
    { name: "rolling_restart_lock_p99_ms", value: round(quantile(rolling.window, 0.99), 1), unit: "ms", ...base, note: `p99 of ${rolling.window.length} acquisitions (lock call to grant, re-sends after UNAVAILABLE included; ${rolling.failures} calls re-sent) of 24 paced callers (8 per namespace, 10 ms between pairs) that started between the first SIGTERM and the last member's readiness; p50 ${round(quantile(rolling.window, 0.5), 1)} ms, max ${round(Math.max(...rolling.window), 0)} ms. Same load before the first SIGTERM: p50 ${round(quantile(rolling.baseline, 0.5), 1)} ms, p99 ${round(quantile(rolling.baseline, 0.99), 1)} ms (${rolling.baseline.length} acquisitions)` },
    { name: "rolling_restart_fresh_grant_ms_p50", value: round(quantile(rolling.freshGrants, 0.5), 0), unit: "ms", ...base, note: `ms from each SIGTERM to the first lock on a free descriptor granted in a namespace the victim led (raw lock to every other member every 5 ms): ${list(rolling.freshGrants)}. Each member ready again (every shard led with an in-sync standby) ${list(rolling.readyMs)} ms after its restart` },
  );

  const kills = await attempt("SIGKILL with a standby", () => crashTrials({ replicas: 1, trials: ctx.quick ? 1 : 5, perNamespace, progress: ctx.progress }));
  if (kills !== null) figures.push(
    { name: "sigkill_locks_lost", value: kills.lost, unit: "locks", ...base, note: `${kills.held} locks held in the victim's namespace over ${kills.freshGrants.length} SIGKILLs of a leader with an in-sync standby (3 servers, --shards 3, default leases)` },
    { name: "sigkill_fresh_grant_ms_p50", value: round(quantile(kills.freshGrants, 0.5), 0), unit: "ms", ...base, note: `SIGKILL of a leader with an in-sync standby, ${HA_LEADER_LEASE_MS} ms leader lease: ms from the kill to the first lock on a free descriptor granted in its namespace by another member (${list(kills.freshGrants)})` },
  );

  const bare = await attempt("SIGKILL without a standby", () => crashTrials({ replicas: 0, trials: ctx.quick ? 1 : 3, perNamespace, progress: ctx.progress }));
  if (bare === null) return figures;
  const bound = bare.validForMs + 2 * HA_LEADER_LEASE_MS;
  const worst = Math.max(...bare.freshGrants);
  figures.push(
    { name: "sigkill_fresh_grant_ms_no_standby_max", value: round(worst, 0), unit: "ms", ...base, note: `the same with --replicas 0, ${bare.freshGrants.length} trials (${list(bare.freshGrants)}); the bound validForMs + 2 leader leases is ${bare.validForMs} + 2 × ${HA_LEADER_LEASE_MS} = ${bound} ms. Locks lost: ${bare.lost} of ${bare.held} (no standby holds them)` },
    { name: "sigkill_fresh_grant_over_bound_no_standby", value: round(worst / bound, 3), unit: "ratio", ...base, note: `the slowest of those trials over its bound of ${bound} ms` },
  );
  return figures;
}

/**
 * Issue 21's cost figures, with issue 12's: c64 lock+tryUnlock through a cluster with a standby and
 * one without, each over a single server, with the control; c1 p50 over the single server; CPU per
 * grant of the standby, the leader and the single server. All from the same trials and rounds.
 */
export async function costFigures(ctx: SuiteContext): Promise<Figure[]> {
  const base = { command: ctx.command, quick: ctx.quick };
  const ms = ctx.quick ? 1_000 : 2_000;
  const trials = await pairsTrials({ trials: ctx.quick ? 1 : 6, rounds: ctx.quick ? 1 : 4, ms, warmMs: ctx.quick ? 500 : 3_000, callers: 64, c1Ms: ctx.quick ? 500 : 2_000, progress: ctx.progress });
  const all = (pick: (t: (typeof trials)[number]) => number[]): number[] => trials.flatMap(pick);
  const perTrial = (pick: (t: (typeof trials)[number]) => number[]): string => trials.map((t) => quantile(pick(t), 0.5).toFixed(3)).join(", ");
  const spread = (xs: readonly number[]): string => `from ${Math.min(...xs).toFixed(3)} to ${Math.max(...xs).toFixed(3)}`;
  const outOfSync = trials.reduce((s, t) => s + t.outOfSyncRounds, 0);
  const how = `${trials.length} trials, each with new processes (a single server, a second single server, a 3-server cluster with --shards 1 and --replicas 1 whose row said in sync, a 3-server cluster with --replicas 0; --lease-ms 2000 on all), ${trials[0]!.clusterOverSingle.length} rounds per trial with the four in a Williams-square order, 64 callers for ${ms / 1000} s each, a new namespace every round; rounds after which the row no longer said in sync: ${outOfSync}`;
  const withStandby = all((t) => t.clusterOverSingle);
  const noStandby = all((t) => t.noStandbyOverSingle);
  const controls = all((t) => t.controlOverSingle);
  const c1 = trials.map((t) => t.c1P50OverSingle);
  const cpu = (pick: (t: (typeof trials)[number]) => number): number => quantile(trials.map(pick), 0.5);
  return [
    { name: "cluster_pairs_ratio_over_single_c64", value: round(quantile(withStandby, 0.5), 3), unit: "ratio", ...base, note: `lock+tryUnlock pairs/s through LockClient.http({ baseUrls }) to the cluster with a standby over the same to the single server, the lower median of every round's ratio: ${how}. Per-trial medians: ${perTrial((t) => t.clusterOverSingle)}; all ${withStandby.length} rounds ${spread(withStandby)}` },
    { name: "cluster_pairs_ratio_no_standby_over_single_c64", value: round(quantile(noStandby, 0.5), 3), unit: "ratio", ...base, note: `the same for the cluster with --replicas 0, same rounds. Per-trial medians: ${perTrial((t) => t.noStandbyOverSingle)}; all rounds ${spread(noStandby)}` },
    { name: "cluster_pairs_ratio_control_c64", value: round(quantile(controls, 0.5), 3), unit: "ratio", ...base, note: `the control: the second single server over the first, same rounds. Per-trial medians: ${perTrial((t) => t.controlOverSingle)}; all rounds ${spread(controls)}` },
    { name: "cluster_c1_p50_ratio_over_single", value: round(quantile(c1, 0.5), 3), unit: "ratio", ...base, note: `one caller doing lock + awaited unlock for ${ctx.quick ? 0.5 : 2} s per target after each trial's rounds: p50 lock call of the cluster with a standby over the single server's, median of the trials (${list(c1, 3)}); p50 µs single / cluster per trial: ${trials.map((t) => `${Math.round(t.c1P50Us.single)}/${Math.round(t.c1P50Us.cluster)}`).join(", ")}` },
    { name: "cluster_standby_cpu_us_per_grant", value: round(cpu((t) => t.cpuUsPerGrant.standby), 2), unit: "µs", ...base, note: `CPU (user + system, /proc/<pid>/stat) the standby used during the c64 rounds of the cluster with a standby over the grants made, median of the trials (${list(trials.map((t) => t.cpuUsPerGrant.standby), 2)})` },
    { name: "cluster_leader_cpu_us_per_grant", value: round(cpu((t) => t.cpuUsPerGrant.leader), 2), unit: "µs", ...base, note: `the same for its leader (${list(trials.map((t) => t.cpuUsPerGrant.leader), 2)})` },
    { name: "single_cpu_us_per_grant", value: round(cpu((t) => t.cpuUsPerGrant.single), 2), unit: "µs", ...base, note: `the same for the single server in its rounds (${list(trials.map((t) => t.cpuUsPerGrant.single), 2)})` },
  ];
}
