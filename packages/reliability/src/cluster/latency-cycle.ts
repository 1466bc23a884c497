import { shardOf, type ClusterResponse } from "@leasehold/protocol";
import type { CliServer } from "../cli-server.js";
import type { ClusterMember } from "./cluster-members.js";
import { clusterMap, postJson, sleep } from "./control-cluster.js";

/** What a 400 ms latency cycle saw (issue 20). */
export interface LatencyOutcome {
  /** One-way latency added to every member's PostgreSQL link (a statement's round trip grows by twice this). */
  readonly oneWayMs: number;
  /** How long the latency was on, ms. */
  readonly latencyOnMs: number;
  /** Shards the victim led when it was sent SIGTERM (they were handed over at the added latency). */
  readonly victimShards: number;
  /** Shards acquired by any member while the latency was on. */
  readonly acquisitions: number;
  /** New namespaces touched (a timestamp each: a bound load per namespace) and how many answered 200. */
  readonly touched: number;
  readonly touchedOk: number;
  /** `shard lost` lines whose reason is the serving gate, while the latency was on (must be 0). */
  readonly gateLosses: number;
  /** What broke the cycle's own rule (empty when none): each becomes a `no gate loss at 400 ms` violation. */
  readonly problems: readonly string[];
}

/** Held in each direction of every member's PostgreSQL link: every statement's round trip takes 400 ms more. */
export const LATENCY_ONE_WAY_MS = 200;

/** The cycle's own check, as violations and the report name it. */
export const NO_GATE_LOSS_CHECK = "no gate loss at 400 ms";

/** How many new namespaces the cycle touches at most, and how many at once. */
const TOUCHES = 2_000;
const TOUCH_CONCURRENCY = 50;

/** The touches stop after this many leader leases even when not all were sent (a loaded 2-core machine). */
const TOUCH_LEASES = 2;

/** Of the lines of every process the members ran, those logged after `marks` (0 for a process started since). */
function linesSince(members: readonly ClusterMember[], marks: ReadonlyMap<CliServer, number>): { member: number; line: Record<string, unknown> }[] {
  return members.flatMap((m) => m.incarnations.flatMap((s) => s.lines.slice(marks.get(s) ?? 0).map((line) => ({ member: m.index, line }))));
}

/**
 * Touch new namespaces (`lat-<cycle>-<i>`), each with one timestamp sent to its shard's leader in
 * the map of a member other than `victim`, until all are sent or `untilMs` (performance.now()) passed.
 */
async function touchNew(members: readonly ClusterMember[], victim: ClusterMember, prefix: string, untilMs: number): Promise<{ sent: number; ok: number }> {
  const others = members.filter((m) => m !== victim);
  let map: ClusterResponse | undefined;
  let next = 0;
  let ok = 0;
  const worker = async (): Promise<void> => {
    for (let i = next++; i < TOUCHES && performance.now() < untilMs; i = next++) {
      if (i % 100 === 0 || map === undefined) map = (await clusterMap(others[i % others.length]!.url)) ?? map;
      const ns = `${prefix}-${i}`;
      const leader = map?.leaders[shardOf(ns, map.shards)]?.leaderUrl;
      const url = leader === null || leader === undefined || leader === victim.url ? others[i % others.length]!.url : leader;
      try {
        if ((await postJson(`${url}/v1/namespaces/${ns}/timestamps`, { count: 1 }, 3_000)).status === 200) ok++;
      } catch {
        // a timeout or a stopping server: the touch still loaded the pool; only gate losses are checked
      }
    }
  };
  await Promise.all(Array.from({ length: TOUCH_CONCURRENCY }, worker));
  return { sent: Math.min(next, TOUCHES), ok };
}

/**
 * The 400 ms latency fault (issue 20), for a cluster with a leader lease long enough for a renewal
 * at 400 ms a statement (the default 3,000 ms: its statement timeout is well above 400 ms): every
 * member's PostgreSQL link gets {@link LATENCY_ONE_WAY_MS} each way (its fault proxy's
 * `setLatency`), for half a leader lease; then `victim` (a live leader) is sent SIGTERM, so the
 * others acquire its shards at 400 ms a statement, while new namespaces are touched (a bound load
 * each on the leaders' statement pools) for up to {@link TOUCH_LEASES} leader leases; the victim is
 * restarted, the latency stays on one more leader lease, then goes. The clients' workload runs all
 * along, so the run's checks cover this window too. The cycle's own check: no member loses a
 * shard to its serving gate (a `shard lost` line whose reason names the gate, counted as
 * `shards_lost_total{reason="gate"}`) from the moment the latency is set until half a leader lease
 * after it is gone: renewals must be sent on time and applied as they arrive, whatever else queues
 * on the slow links.
 */
export async function runLatency(members: readonly ClusterMember[], victim: ClusterMember, leaderLeaseMs: number, cycle: number): Promise<LatencyOutcome> {
  const marks = new Map<CliServer, number>();
  for (const m of members) for (const s of m.incarnations) marks.set(s, s.lines.length);
  const on = performance.now();
  for (const m of members) m.proxy.setLatency(LATENCY_ONE_WAY_MS);
  let latencyOnMs = 0;
  let victimShards = 0;
  let touched = { sent: 0, ok: 0 };
  try {
    // A full renewal round at the new latency before anything else happens.
    await sleep(leaderLeaseMs / 2);
    victimShards = (await clusterMap(members.find((m) => m !== victim)!.url))?.leaders.filter((l) => l.leaderUrl === victim.url).length ?? 0;
    victim.server.child.kill("SIGTERM");
    touched = await touchNew(members, victim, `lat-${cycle}`, performance.now() + leaderLeaseMs * TOUCH_LEASES);
    await victim.server.exited;
    await victim.restart();
    await sleep(leaderLeaseMs);
  } finally {
    for (const m of members) m.proxy.setLatency(0);
    latencyOnMs = performance.now() - on;
  }
  // A gate that closes just after the latency went was still closed by it.
  await sleep(leaderLeaseMs / 2);
  const lines = linesSince(members, marks);
  const problems: string[] = [];
  let gateLosses = 0;
  for (const { member, line } of lines) {
    if (line.msg === "shard lost" && typeof line.reason === "string" && line.reason.includes("gate")) {
      gateLosses++;
      problems.push(`member ${member} lost shard ${String(line.shard)} (epoch ${String(line.epoch)}) to its gate at ${2 * LATENCY_ONE_WAY_MS} ms round trips: "${line.reason}"`);
    }
  }
  const acquisitions = lines.filter(({ line }) => line.msg === "shard acquired").length;
  return { oneWayMs: LATENCY_ONE_WAY_MS, latencyOnMs, victimShards, acquisitions, touched: touched.sent, touchedOk: touched.ok, gateLosses, problems };
}
