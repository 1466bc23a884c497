import { Violations } from "../violations.js";
import { BOUND_EXTENSIONS_FENCED, boundEvents, checkBoundExtensionsFenced } from "./check-bound-extensions.js";
import { checkServeIntervals, serveIntervals } from "./check-serve-intervals.js";
import { checkTimestampOrder } from "./check-timestamp-order.js";
import type { ControlHalf } from "./control-half.js";
import { awaitTakeover, closeControlCluster, confirmLeader, ControlSetupError, memberLines, sleep, startControlCluster } from "./control-cluster.js";
import { startTimestampHammer } from "./timestamp-hammer.js";

export { BOUND_EXTENSIONS_FENCED as EPOCH_FENCE_CHECK };

const LEADER_LEASE_MS = 700;

/**
 * Epoch-fence control, one half. The epoch fence is the backstop for a failed gate (a clock-rate
 * violation), so the gate is off in both halves (A: `gate`; B: `gate,epoch-fence`) and only the
 * fence varies. A reservation block of 2 (`LEASEHOLD_TEST_RESERVE_BLOCK`) makes nearly every
 * timestamp need its own bound extension. Four loops ask the leader L1 alone for timestamps of
 * namespace `ctl` (nobody asks anyone else, so after a takeover the bound row stays as L1 left it),
 * then go quiet so that no extension is in flight; L1 is SIGSTOPped, the loops ask again for 3
 * numbers each (their requests wait in L1's sockets), and once another member's map shows it took
 * the shard over L1 is SIGCONTed. On resuming, L1 (gate off) handles the waiting requests, which
 * need more than it has stored, and sends a bound extension at once, before its renewal's answer
 * (a round trip to PostgreSQL later) tells it the shard is gone. With the fence (A) that extension matches
 * nothing and L1 steps down: 0 extensions after the new epoch's acquisition. Without it (B) it
 * commits: the check "bound extensions fenced by epoch" fires.
 *
 * Once L1 has stepped down, balancing may hand the shard back to it (it is first in id order) under
 * a later epoch; that term's extensions are legitimate and pass the check.
 *
 * Throws a `ControlSetupError` (the run proves nothing) when the leader changed before the pause, or when L1 extended no bound under its term or no other member's
 * acquisition of a newer epoch was logged.
 */
export async function runEpochFenceControl(seed: number, ruleRemoved: boolean): Promise<ControlHalf> {
  const started = performance.now();
  const testBreak = ruleRemoved ? "gate,epoch-fence" : "gate";
  const env = { LEASEHOLD_TEST_BREAK: testBreak, LEASEHOLD_TEST_RESERVE_BLOCK: "2" };
  const cluster = await startControlCluster(seed, { leaderLeaseMs: LEADER_LEASE_MS, leaseMs: 2_000, env, replicas: 0 });
  const hammers: { stop(): Promise<unknown> }[] = [];
  try {
    const victim = cluster.leader.server.child;
    const warmup = startTimestampHammer(cluster.leader.url, "ctl", 4, "timestamps");
    hammers.push(warmup);
    await sleep(300);
    // Quiet, so no extension is in flight when L1 stops: on resuming it must send a new one.
    await warmup.stop();
    await sleep(100);
    // The leader's term now (after the pause, it may lead again under a later epoch once balancing hands the shard back).
    const victimIndex = cluster.members.indexOf(cluster.leader);
    const victimEpoch = Math.max(...boundEvents(memberLines(cluster)).acquisitions.filter((a) => a.server === victimIndex).map((a) => a.epoch));
    await confirmLeader(cluster);
    const stoppedAt = performance.now();
    victim.kill("SIGSTOP");
    // Each asks for 3 numbers, more than a block of 2 leaves ahead: the first one handled needs an extension.
    const hammer = startTimestampHammer(cluster.leader.url, "ctl", 4, "timestamps", 3, warmup);
    hammers.push(hammer);
    const takeover = await awaitTakeover(cluster, 15_000);
    victim.kill("SIGCONT");
    const resumedAt = performance.now();
    await sleep(LEADER_LEASE_MS);
    await hammer.stop();
    // One more renewal round logs every live term's serve interval.
    await sleep(LEADER_LEASE_MS / 2);
    const lines = memberLines(cluster);
    const events = boundEvents(lines);
    const newer = events.acquisitions.filter((a) => a.epoch > victimEpoch && a.server !== victimIndex);
    const before = events.extensions.filter((x) => x.server === victimIndex && x.epoch === victimEpoch);
    if (before.length === 0 || newer.length === 0) {
      throw new ControlSetupError(`epoch-fence control proves nothing: ${before.length} extensions by the leader (epoch ${victimEpoch}), ${newer.length} acquisitions of a newer epoch by another member`);
    }
    const violations = new Violations();
    const checked = {
      [BOUND_EXTENSIONS_FENCED]: checkBoundExtensionsFenced(events, violations),
      "one leader serving per shard": checkServeIntervals(serveIntervals(lines), violations),
      "timestamps unique and real-time ordered": checkTimestampOrder(hammer.answers, violations),
    };
    const firstNewer = Math.min(...newer.map((a) => a.dbTimeUs));
    return {
      ruleRemoved,
      testBreak,
      violations,
      checked,
      facts: {
        pausedMs: resumedAt - stoppedAt,
        takeoverMs: takeover.at - stoppedAt,
        extensionsByLeaderTerm: before.length,
        extensionsAfterTakeover: before.filter((x) => x.dbTimeUs >= firstNewer).length,
        answers: hammer.answers.length,
      },
      operations: [...hammer.statuses.values()].reduce((s, n) => s + n, 0),
      elapsedMs: performance.now() - started,
    };
  } finally {
    // A set-up failure leaves loops running: stop them; their calls end once the servers are gone.
    const stopped = Promise.all(hammers.map((h) => h.stop()));
    await closeControlCluster(cluster);
    await stopped;
  }
}
