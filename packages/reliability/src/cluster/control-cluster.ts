import type { ClusterResponse } from "@leasehold/protocol";
import { ClusterMember, type MemberSettings } from "./cluster-members.js";
import { createRunSchema, type RunSchema } from "./pg-run-schema.js";

/** The test cluster of one negative-control run: three members over one schema, one shard. */
export interface ControlCluster {
  readonly members: readonly ClusterMember[];
  readonly schema: RunSchema;
  /** The member leading the shard when the cluster settled (the control's victim). */
  readonly leader: ClusterMember;
  /** Its term's leader id, as `GET /v1/cluster` answered it. */
  readonly leaderId: string;
}

/**
 * A control run could not set up what it needs (the cluster did not settle, its leader changed
 * before the fault, a takeover too slow for the scenario to mean anything): the run says nothing
 * about the rule, so the half may be run again (see `runControl`). Never thrown for an outcome of
 * the checks.
 */
export class ControlSetupError extends Error {
  override readonly name = "ControlSetupError";
}

/** Throws a {@link ControlSetupError} unless the leader still leads the shard under the term the cluster settled on. */
export async function confirmLeader(cluster: ControlCluster): Promise<void> {
  const entry = (await clusterMap(cluster.leader.url))?.leaders[0];
  if (entry?.leaderId !== cluster.leaderId || entry.leaderUrl !== cluster.leader.url) {
    throw new ControlSetupError(`the leader changed before the fault: ${String(entry?.leaderUrl)} ${String(entry?.leaderId)}, not ${cluster.leader.url} ${cluster.leaderId}`);
  }
}

/** Leader leases the members must agree on one leader term before a control starts. */
export const SETTLE_LEASES = 2;

/** Resolve after `ms` milliseconds. */
export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** `GET /v1/cluster` of `url`, or undefined when it does not answer within a second. */
export async function clusterMap(url: string): Promise<ClusterResponse | undefined> {
  try {
    const res = await fetch(`${url}/v1/cluster`, { signal: AbortSignal.timeout(1_000) });
    return res.ok ? ((await res.json()) as ClusterResponse) : undefined;
  } catch {
    return undefined;
  }
}

/** A JSON POST to `url`: its status and parsed body (`undefined` when not JSON); rejects on a connection failure or timeout. */
export async function postJson(url: string, body: unknown, timeoutMs: number): Promise<{ status: number; body: unknown }> {
  const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body), signal: AbortSignal.timeout(timeoutMs) });
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  return { status: res.status, body: parsed };
}

/**
 * Start `count` members (default three; the standby controls use two, a leader and its standby) with one shard and wait until every member's map has named the same leader
 * term for {@link SETTLE_LEASES} leader leases in a row. Member 0 starts first and is first in id
 * order, so it takes the shard and keeps it (its share is the one shard); the wait makes sure no
 * hand-over is still coming, whose new leader would hold lock grants back for a whole client
 * lease. Closes everything it started if that fails. Call {@link closeControlCluster} when done.
 */
export async function startControlCluster(seed: number, settings: Omit<MemberSettings, "shards">, count = 3): Promise<ControlCluster> {
  const schema = await createRunSchema();
  const members: ClusterMember[] = [];
  try {
    const s = { ...settings, shards: 1, serverIdPrefix: "ctl-s" };
    members.push(await ClusterMember.start(0, seed, schema, s));
    members.push(...(await Promise.all(Array.from({ length: count - 1 }, (_, i) => ClusterMember.start(i + 1, seed, schema, s)))));
    const deadline = performance.now() + 30_000;
    let agreed: { leader: ClusterMember; leaderId: string; since: number } | undefined;
    for (;;) {
      const maps = await Promise.all(members.map((m) => clusterMap(m.url)));
      const terms = new Set(maps.map((m) => `${m?.leaders[0]?.leaderUrl ?? null} ${m?.leaders[0]?.leaderId ?? null}`));
      const leader = members.find((m) => m.url === maps[0]?.leaders[0]?.leaderUrl);
      const leaderId = maps[0]?.leaders[0]?.leaderId;
      const now = performance.now();
      if (terms.size !== 1 || leader === undefined || typeof leaderId !== "string") agreed = undefined;
      else if (agreed?.leaderId !== leaderId) agreed = { leader, leaderId, since: now };
      else if (now - agreed.since >= SETTLE_LEASES * settings.leaderLeaseMs) return { members, schema, leader, leaderId };
      if (now > deadline) throw new ControlSetupError(`the control cluster did not settle on a leader in 30 s: ${[...terms].join(", ")}`);
      await sleep(50);
    }
  } catch (err) {
    await closeControlCluster({ members, schema });
    throw err;
  }
}

/**
 * Poll the members other than `victim` until one's map names a leader of the shard other than the
 * victim's term `victimLeaderId`; answers the monotonic time it was first seen (after the new
 * leader's acquisition) and that leader. Throws after `timeoutMs`.
 */
export async function awaitTakeover(cluster: ControlCluster, timeoutMs: number): Promise<{ at: number; leader: ClusterMember }> {
  const others = cluster.members.filter((m) => m !== cluster.leader);
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const maps = await Promise.all(others.map((m) => clusterMap(m.url)));
    const at = performance.now();
    for (const map of maps) {
      const entry = map?.leaders[0];
      const leader = others.find((m) => m.url === entry?.leaderUrl);
      if (leader !== undefined && entry?.leaderId !== cluster.leaderId) return { at, leader };
    }
    if (performance.now() > deadline) throw new Error(`no other member took the shard over within ${timeoutMs} ms`);
    await sleep(20);
  }
}

/** Every member's JSON log lines (of every incarnation), member i's at index i. */
export function memberLines(cluster: Pick<ControlCluster, "members">): Record<string, unknown>[][] {
  return cluster.members.map((m) => m.lines());
}

/** SIGCONT and SIGKILL every member, close the proxies, drop the schema. */
export async function closeControlCluster(cluster: Pick<ControlCluster, "members" | "schema">): Promise<void> {
  try {
    await Promise.all(cluster.members.map((m) => m.close()));
  } finally {
    await cluster.schema.drop();
  }
}
