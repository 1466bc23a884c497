import type { SeededRandom } from "../seeded-random.js";
import type { ClusterMember } from "./cluster-members.js";
import { sleep } from "./control-cluster.js";
import type { FailureLog } from "./failure-log.js";
import type { RunSchema } from "./pg-run-schema.js";
import { inSyncRow, leaseRows, waitWhole, type LeaseRow } from "./standby-rows.js";

/**
 * The standby fault cycles (issue 21), each under the running workload:
 * - `rolling-restart`: SIGTERM each member in turn, restart it with the same `--server-id`, wait
 *   until it is a ready member and every shard has an in-sync standby again, then the next;
 * - `kill-leader`: SIGKILL a leader that has an in-sync standby;
 * - `kill-standby-then-leader`: SIGKILL a shard's standby, then (once the leader noticed) its leader:
 *   two failures at once from the second kill until both are back;
 * - `stop-standby`: SIGSTOP a shard's standby for 1.5 leader leases, then SIGCONT.
 */
export const STANDBY_CYCLES = ["rolling-restart", "kill-leader", "kill-standby-then-leader", "stop-standby"] as const;
/** A cycle of {@link STANDBY_CYCLES}, or `sigterm-leader` (one step of a rolling restart, on a leader with an in-sync standby: the hand-over control's). */
export type StandbyCycleKind = (typeof STANDBY_CYCLES)[number] | "sigterm-leader";

/** What one cycle did. */
export interface StandbyCycle {
  readonly kind: StandbyCycleKind;
  /** The faults in order, e.g. `SIGKILL member 1 (leader of shard 2, standby member 0)`. */
  readonly steps: readonly string[];
  /** ms from the (last) kill of a leader until its shard's row named a live other holder; undefined where not measured. */
  readonly takeoverMs?: number | undefined;
  /** `kill-standby-then-leader`: the leader had an in-sync standby again (the third member) when it was killed. */
  readonly resynced?: boolean | undefined;
  readonly elapsedMs: number;
}

/** What a cycle works with. */
export interface StandbyCycleContext {
  readonly members: readonly ClusterMember[];
  readonly schema: RunSchema;
  readonly failures: FailureLog;
  readonly leaderLeaseMs: number;
  readonly rng: SeededRandom;
  /** How long the cluster may take to be whole again after a cycle (a loaded 2-core machine). */
  readonly wholeTimeoutMs: number;
}

interface Pair {
  readonly row: LeaseRow;
  readonly leader: ClusterMember;
  readonly standby: ClusterMember;
}

const idOf = (m: ClusterMember): string => {
  if (m.serverId === undefined) throw new Error(`member ${m.index} has no fixed --server-id: the standby cycles need one`);
  return m.serverId;
};

/** A random shard whose row names a live leader and an in-sync standby, both members (waits for one: a balance move may be under way). */
async function pickPair(ctx: StandbyCycleContext): Promise<Pair> {
  const deadline = performance.now() + ctx.wholeTimeoutMs;
  for (;;) {
    const rows = await leaseRows(ctx.schema);
    const pairs = rows.filter(inSyncRow).flatMap((row) => {
      const leader = ctx.members.find((m) => idOf(m) === row.holder);
      const standby = ctx.members.find((m) => idOf(m) === row.standbyId);
      return leader === undefined || standby === undefined ? [] : [{ row, leader, standby }];
    });
    if (pairs.length > 0) return ctx.rng.pick(pairs);
    if (performance.now() > deadline) throw new Error(`no shard with a leader and an in-sync standby: ${JSON.stringify(rows)}`);
    await sleep(20);
  }
}

/** ms from `from` until `shard`'s row names a live holder other than `victim`. */
async function takeover(ctx: StandbyCycleContext, shard: number, victim: string, from: number): Promise<number> {
  const deadline = from + ctx.wholeTimeoutMs;
  for (;;) {
    const row = (await leaseRows(ctx.schema))[shard];
    if (row !== undefined && row.live && row.holder !== null && row.holder !== victim) return performance.now() - from;
    if (performance.now() > deadline) throw new Error(`shard ${shard} was not taken over from ${victim} within ${ctx.wholeTimeoutMs} ms: ${JSON.stringify(row)}`);
    await sleep(20);
  }
}

/** Restart the (exited) `victims`, wait until the cluster is whole, end their failures. */
async function backWhole(ctx: StandbyCycleContext, victims: readonly ClusterMember[], steps: string[]): Promise<void> {
  const from = performance.now();
  for (const v of victims) {
    await v.server.exited;
    await v.restart();
  }
  const listening = performance.now();
  await waitWhole(ctx.schema, ctx.members.map(idOf), ctx.leaderLeaseMs, ctx.wholeTimeoutMs);
  for (const v of victims) ctx.failures.up(v.index);
  steps.push(`restarted (listening) after ${(listening - from).toFixed(0)} ms, cluster whole ${(performance.now() - listening).toFixed(0)} ms later`);
}

const where = (p: Pair): string => `shard ${p.row.shard}, epoch ${p.row.epoch}`;

async function sigterm(ctx: StandbyCycleContext, m: ClusterMember, steps: string[], note: string): Promise<void> {
  m.server.child.kill("SIGTERM");
  ctx.failures.down(m.index, "SIGTERM");
  steps.push(`SIGTERM member ${m.index}${note}`);
  await backWhole(ctx, [m], steps);
}

/** Run one cycle under the running workload; resolves once the cluster is whole again. */
export async function runStandbyCycle(ctx: StandbyCycleContext, kind: StandbyCycleKind): Promise<StandbyCycle> {
  const started = performance.now();
  const steps: string[] = [];
  const done = (extra: Partial<StandbyCycle> = {}): StandbyCycle => ({ kind, steps, elapsedMs: performance.now() - started, ...extra });
  switch (kind) {
    case "rolling-restart":
      for (const m of ctx.members) await sigterm(ctx, m, steps, "");
      return done();
    case "sigterm-leader": {
      const p = await pickPair(ctx);
      await sigterm(ctx, p.leader, steps, ` (leader of ${where(p)}, standby member ${p.standby.index})`);
      return done();
    }
    case "kill-leader": {
      const p = await pickPair(ctx);
      const at = performance.now();
      p.leader.server.child.kill("SIGKILL");
      ctx.failures.down(p.leader.index, "SIGKILL");
      steps.push(`SIGKILL member ${p.leader.index} (leader of ${where(p)}, standby member ${p.standby.index})`);
      const takeoverMs = await takeover(ctx, p.row.shard, idOf(p.leader), at);
      await backWhole(ctx, [p.leader], steps);
      return done({ takeoverMs });
    }
    case "kill-standby-then-leader": {
      const p = await pickPair(ctx);
      p.standby.server.child.kill("SIGKILL");
      ctx.failures.down(p.standby.index, "SIGKILL");
      steps.push(`SIGKILL member ${p.standby.index} (standby of ${where(p)})`);
      // Until the leader noticed (the row no longer names the dead standby in sync) and, within
      // two leader leases, named the third member in sync: then the shard's table survives the second kill.
      const deadline = performance.now() + 2 * ctx.leaderLeaseMs;
      let row: LeaseRow | undefined;
      for (;;) {
        row = (await leaseRows(ctx.schema))[p.row.shard];
        const noticed = row !== undefined && (row.standbyId !== p.row.standbyId || !row.inSync);
        if ((noticed && row !== undefined && inSyncRow(row)) || (noticed && performance.now() > deadline)) break;
        if (performance.now() > deadline + ctx.wholeTimeoutMs) throw new Error(`the leader of shard ${p.row.shard} never noticed its standby's death: ${JSON.stringify(row)}`);
        await sleep(20);
      }
      const resynced = row !== undefined && inSyncRow(row) && row.holder === idOf(p.leader);
      const at = performance.now();
      p.leader.server.child.kill("SIGKILL");
      ctx.failures.down(p.leader.index, "SIGKILL");
      steps.push(`SIGKILL member ${p.leader.index} (its leader; ${resynced ? "in sync with the third member by then" : "no in-sync standby by then"})`);
      const takeoverMs = await takeover(ctx, p.row.shard, idOf(p.leader), at);
      await backWhole(ctx, [p.standby, p.leader], steps);
      return done({ takeoverMs, resynced });
    }
    case "stop-standby": {
      const p = await pickPair(ctx);
      p.standby.server.child.kill("SIGSTOP");
      ctx.failures.down(p.standby.index, "SIGSTOP");
      steps.push(`SIGSTOP member ${p.standby.index} (standby of ${where(p)}) for ${Math.round(1.5 * ctx.leaderLeaseMs)} ms`);
      await sleep(1.5 * ctx.leaderLeaseMs);
      p.standby.server.child.kill("SIGCONT");
      await waitWhole(ctx.schema, ctx.members.map(idOf), ctx.leaderLeaseMs, ctx.wholeTimeoutMs);
      ctx.failures.up(p.standby.index);
      return done();
    }
  }
}
