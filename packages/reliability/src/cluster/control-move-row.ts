import { shardOf } from "@leasehold/protocol";
import { Violations } from "../violations.js";
import { checkServeIntervals, serveIntervals } from "./check-serve-intervals.js";
import { checkTimestampOrder } from "./check-timestamp-order.js";
import { ClusterMember } from "./cluster-members.js";
import type { ControlHalf } from "./control-half.js";
import { closeControlCluster, sleep } from "./control-cluster.js";
import { createRunSchema } from "./pg-run-schema.js";
import { leaseRows } from "./standby-rows.js";
import { startTimestampHammer, type TimestampHammer } from "./timestamp-hammer.js";

/** The test break this control removes the rule with (server test-breaks.ts). */
export const MOVE_ROW_BREAK = "move-row-before-gate";
/** The check that must fire with the rule removed: two terms of the shard served at the same time. */
export const MOVE_ROW_CHECK = "one leader serving per shard";
/**
 * The check that fires with it in practice: a client that got the taker's timestamps (above the
 * bound) then gets the old term's (from its reserved block, below it). Seen firing in every run.
 */
export const MOVE_ROW_TIMESTAMP_CHECK = "timestamps real-time ordered";

const LEADER_LEASE_MS = 1_000;
const SHARDS = 2;
const HAND_OVER_LINES = ["shard handed over", "TEST ONLY (move-row-before-gate): the row moved to the standby while this term still serves; it serves on until its gate closes"];

/** `ns-<i>` names, the first on each shard. */
function namespacePerShard(): string[] {
  const byShard = new Map<number, string>();
  for (let i = 0; byShard.size < SHARDS; i++) if (!byShard.has(shardOf(`ns-${i}`, SHARDS))) byShard.set(shardOf(`ns-${i}`, SHARDS), `ns-${i}`);
  return [...byShard.entries()].sort(([a], [b]) => a - b).map(([, ns]) => ns);
}

/** Poll `condition` every 20 ms until it holds; throws `what` after `timeoutMs`. */
async function until(condition: () => boolean | Promise<boolean>, what: string, timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!(await condition())) {
    if (performance.now() > deadline) throw new Error(`move-row control: timed out waiting for ${what}`);
    await sleep(20);
  }
}

/**
 * The negative control of "the gate closes before the row moves" (a balance hand-over, where the
 * old leader's listener stays open, unlike at SIGTERM). Member 0 leads both shards of a fresh
 * cluster; member 1 joins, becomes their standby, and balance hands it one shard. Timestamp loops
 * ask both servers directly (no redirects followed) for a namespace of each shard throughout.
 * Intact, the old term's gate closed before the row moved: its last answer precedes the taker's
 * first. With `move-row-before-gate` the row moves first and the old term serves on until its gate
 * closes by time, while the taker already serves: the serve intervals of the shard's two epochs
 * overlap ({@link MOVE_ROW_CHECK} fires) and a client that saw the taker's timestamps then gets
 * lower ones from the old term ({@link MOVE_ROW_TIMESTAMP_CHECK} fires as well).
 * Facts: `handedOver` (1 once the balance hand-over happened), `oldTermEndedAfterMoveMs` (from the
 * hand-over line to the old term's `shard lost`, -1 when not seen).
 */
export async function runMoveRowControl(seed: number, ruleRemoved: boolean): Promise<ControlHalf> {
  const started = performance.now();
  const violations = new Violations();
  const schema = await createRunSchema();
  const env = ruleRemoved ? { LEASEHOLD_TEST_BREAK: MOVE_ROW_BREAK } : undefined;
  const settings = { leaderLeaseMs: LEADER_LEASE_MS, shards: SHARDS, leaseMs: 3_000, env, serverIdPrefix: "mr-s", keepServerId: true };
  const members: ClusterMember[] = [];
  const hammers: TimestampHammer[] = [];
  try {
    members.push(await ClusterMember.start(0, seed, schema, settings));
    const [a] = members as [ClusterMember];
    await until(async () => (await leaseRows(schema)).every((r) => r.holder === a.serverId && r.live), "member 0 leading both shards", 30_000);
    const namespaces = namespacePerShard();
    members.push(await ClusterMember.start(1, seed, schema, settings));
    const [, b] = members as [ClusterMember, ClusterMember];
    for (const m of members) for (const ns of namespaces) hammers.push(startTimestampHammer(m.url, ns, 2, `member ${m.index}`));
    const handOverLine = (): Record<string, unknown> | undefined => a.lines().find((l) => HAND_OVER_LINES.includes(l.msg as string));
    await until(() => handOverLine() !== undefined, "member 0 handing a shard over for balance", 30_000);
    const moved = handOverLine()!;
    const lostLine = (): Record<string, unknown> | undefined => a.lines().find((l) => l.msg === "shard lost" && l.shard === moved.shard && l.epoch === moved.epoch);
    // Both serve on for a while: the old term until its gate closes (at most a leader lease), the taker after.
    await until(() => lostLine() !== undefined, "the old term's end", 10_000);
    await sleep(LEADER_LEASE_MS);
    for (const h of hammers) await h.stop();
    // One more renewal round logs every live term's serve interval up to its last operation.
    await sleep(LEADER_LEASE_MS / 2);
    const lines = members.map((m) => m.lines());
    const terms = checkServeIntervals(serveIntervals(lines), violations);
    const answers = hammers.flatMap((h) => h.answers);
    const timestampAnswers = checkTimestampOrder(answers, violations);
    const lost = lostLine();
    return {
      ruleRemoved,
      testBreak: env?.LEASEHOLD_TEST_BREAK,
      violations,
      checked: { [MOVE_ROW_CHECK]: terms, [MOVE_ROW_TIMESTAMP_CHECK]: timestampAnswers },
      facts: {
        handedOver: 1,
        takerServed: b.lines().some((l) => l.msg === "standby promoted" && l.shard === moved.shard) ? 1 : 0,
        oldTermEndedAfterMoveMs: lost === undefined ? -1 : (lost.time as number) - (moved.time as number),
      },
      operations: answers.length,
      elapsedMs: performance.now() - started,
    };
  } finally {
    await Promise.all(hammers.map((h) => h.stop()));
    await closeControlCluster({ members, schema });
  }
}
