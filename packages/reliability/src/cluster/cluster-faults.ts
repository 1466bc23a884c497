import { shardOf } from "@leasehold/protocol";
import type { SeededRandom } from "../seeded-random.js";
import type { ClusterMember } from "./cluster-members.js";
import { clusterMap, sleep } from "./control-cluster.js";
import { runDuplicateId, type DuplicateIdOutcome } from "./duplicate-id-cycle.js";
import { runLatency, type LatencyOutcome } from "./latency-cycle.js";
import type { RunSchema } from "./pg-run-schema.js";

/** The faults of the cluster suite's main run (issue 12; `duplicate-id` from issue 20). */
export const CLUSTER_FAULTS = ["sigkill", "sigstop", "blackhole", "terminate", "sigterm", "duplicate-id"] as const;
/**
 * A fault cycle: one of {@link CLUSTER_FAULTS}, or `latency` (issue 20: 400 ms round trips on every
 * PostgreSQL link, see latency-cycle.ts). `latency` is not in the main run's draw: it needs a
 * leader lease a renewal fits in at 400 ms a statement, so it runs on a cluster of its own.
 */
export type ClusterFault = (typeof CLUSTER_FAULTS)[number] | "latency";

/** What one fault cycle did. */
export interface FaultCycle {
  readonly fault: ClusterFault;
  readonly victim: number;
  /** ms from the fault to the first timestamp another server served for a namespace the victim led; undefined when not measured. */
  readonly failoverMs?: number | undefined;
  /** What a `duplicate-id` cycle saw; undefined for the other faults. */
  readonly duplicate?: DuplicateIdOutcome | undefined;
  /** What a `latency` cycle saw; undefined for the other faults. */
  readonly latency?: LatencyOutcome | undefined;
}

/** What a fault cycle works with. */
export interface FaultContext {
  readonly members: readonly ClusterMember[];
  readonly schema: RunSchema;
  readonly namespaces: readonly string[];
  readonly leaderLeaseMs: number;
  /** SIGSTOP and blackhole last this many leader leases. */
  readonly pauseLeases: number;
  readonly rng: SeededRandom;
}

/** The victim: the live leader of a random namespace's shard (any live member if none is known). */
async function pickVictim(ctx: FaultContext): Promise<{ victim: ClusterMember; namespace: string | undefined }> {
  const live = ctx.members.filter((m) => m.alive);
  const namespace = ctx.rng.pick(ctx.namespaces);
  for (const m of live) {
    const map = await clusterMap(m.url);
    if (map === undefined) continue;
    const url = map.leaders[shardOf(namespace, map.shards)]?.leaderUrl;
    const leader = live.find((l) => l.url === url);
    if (leader !== undefined) return { victim: leader, namespace };
  }
  return { victim: ctx.rng.pick(live), namespace: undefined };
}

/** Time until a member other than `victim` answers a timestamp of `namespace` with 200 (it is the new leader). */
async function failover(ctx: FaultContext, victim: ClusterMember, namespace: string, from: number, limitMs: number): Promise<number | undefined> {
  const others = ctx.members.filter((m) => m !== victim);
  while (performance.now() - from < limitMs) {
    const answers = await Promise.all(
      others.map(async (m) => {
        try {
          const res = await fetch(`${m.url}/v1/namespaces/${namespace}/timestamps`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ count: 1 }),
            signal: AbortSignal.timeout(500),
          });
          await res.arrayBuffer();
          return res.status === 200;
        } catch {
          return false;
        }
      }),
    );
    if (answers.includes(true)) return performance.now() - from;
    await sleep(10);
  }
  return undefined;
}

/** Inject `fault` on the leader of a random namespace and wait until the cluster is whole again. */
export async function runFaultCycle(ctx: FaultContext, fault: ClusterFault): Promise<FaultCycle> {
  const { victim, namespace } = await pickVictim(ctx);
  const lease = ctx.leaderLeaseMs;
  const pauseMs = Math.round(lease * ctx.pauseLeases);
  const at = performance.now();
  const measure = (limitMs: number): Promise<number | undefined> => (namespace === undefined ? Promise.resolve(undefined) : failover(ctx, victim, namespace, at, limitMs));
  let failoverMs: number | undefined;
  switch (fault) {
    case "sigkill":
      victim.server.child.kill("SIGKILL");
      failoverMs = await measure(lease * 8);
      await victim.server.exited;
      await victim.restart();
      break;
    case "sigterm":
      victim.server.child.kill("SIGTERM");
      failoverMs = await measure(lease * 8);
      await victim.server.exited;
      await victim.restart();
      break;
    case "sigstop": {
      victim.server.child.kill("SIGSTOP");
      const measured = measure(pauseMs);
      await sleep(pauseMs);
      victim.server.child.kill("SIGCONT");
      failoverMs = await measured;
      break;
    }
    case "blackhole": {
      victim.proxy.setFaults(true);
      const measured = measure(pauseMs);
      await sleep(pauseMs);
      victim.proxy.setFaults(false);
      failoverMs = await measured;
      break;
    }
    case "terminate":
      await ctx.schema.terminate(victim.applicationName);
      await sleep(lease / 2);
      break;
    case "duplicate-id":
      return { fault, victim: victim.index, duplicate: await runDuplicateId(victim, lease) };
    case "latency":
      return { fault, victim: victim.index, latency: await runLatency(ctx.members, victim, lease, ctx.rng.int(0, 999_999)) };
  }
  return { fault, victim: victim.index, failoverMs };
}
