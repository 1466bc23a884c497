import { Violations } from "../violations.js";
import { checkServeIntervals, serveIntervals } from "./check-serve-intervals.js";
import { checkTimestampOrder, type TimestampAnswer } from "./check-timestamp-order.js";
import type { ControlHalf } from "./control-half.js";
import { awaitTakeover, closeControlCluster, confirmLeader, ControlSetupError, memberLines, postJson, sleep, startControlCluster, type ControlCluster } from "./control-cluster.js";
import { startTimestampHammer } from "./timestamp-hammer.js";

/** The check the gate control targets. */
export const GATE_CHECK = "one leader serving per shard";

const LEADER_LEASE_MS = 700;

/** Loops taking and releasing exclusive locks on `url` alone (no routing), until stopped; answers the calls made. */
function startLockHammer(url: string, namespace: string, loops: number): { stop(): Promise<number> } {
  let stopping = false;
  let calls = 0;
  const loop = async (i: number): Promise<void> => {
    while (!stopping) {
      calls++;
      try {
        const res = await postJson(`${url}/v1/namespaces/${namespace}/lock`, { locks: [{ descriptor: `d${i}`, mode: "exclusive" }], acquireTimeoutMs: 200 }, 20_000);
        const token = (res.body as { token?: string } | undefined)?.token;
        if (res.status === 200 && token !== undefined) {
          calls++;
          await postJson(`${url}/v1/namespaces/${namespace}/unlock`, { tokens: [token] }, 20_000);
        } else await sleep(5);
      } catch {
        await sleep(5);
      }
    }
  };
  const running = Array.from({ length: loops }, (_, i) => loop(i));
  return {
    async stop() {
      stopping = true;
      await Promise.all(running);
      return calls;
    },
  };
}

/** Ask `member` for one timestamp until it answers 200 (it now serves the shard); that answer. */
async function firstServed(cluster: ControlCluster, url: string, namespace: string): Promise<TimestampAnswer> {
  const deadline = performance.now() + 15_000;
  for (;;) {
    const sentAt = performance.now();
    const res = await postJson(`${url}/v1/namespaces/${namespace}/timestamps`, { count: 1 }, 2_000).catch(() => undefined);
    if (res?.status === 200) {
      const start = (res.body as { start: number }).start;
      return { namespace, first: start, last: start, sentAt, receivedAt: performance.now(), via: "probe of the new leader" };
    }
    if (performance.now() > deadline) throw new Error(`gate control: the new leader did not serve ${namespace} within 15 s (${cluster.members.length} members)`);
    await sleep(10);
  }
}

/**
 * Gate control, one half. Two loops of timestamps and two of lock/unlock go to the shard's leader
 * L1 alone (so requests wait in its sockets while it is stopped). L1 is SIGSTOPped; once another
 * member took the shard over, it is asked for a timestamp until it serves one (its term has
 * served); then L1's link to PostgreSQL is blackholed and L1 is SIGCONTed, so no renewal answer can
 * end its term. With the gate intact, L1's gate closed before the takeover and it serves nothing
 * on resuming: its term's last operation precedes the new term's first, 0 violations of "one
 * leader serving per shard". With `LEASEHOLD_TEST_BREAK=gate` it serves the waiting requests and
 * more: the check fires. The link is restored for new connections before the end.
 */
export async function runGateControl(seed: number, ruleRemoved: boolean): Promise<ControlHalf> {
  const started = performance.now();
  const testBreak = ruleRemoved ? "gate" : undefined;
  const env = testBreak === undefined ? undefined : { LEASEHOLD_TEST_BREAK: testBreak };
  const cluster = await startControlCluster(seed, { leaderLeaseMs: LEADER_LEASE_MS, leaseMs: 2_000, env, replicas: 0 });
  const hammers: { stop(): Promise<unknown> }[] = [];
  try {
    const victim = cluster.leader.server.child;
    const timestamps = startTimestampHammer(cluster.leader.url, "ctl", 2, "timestamps");
    hammers.push(timestamps);
    const locks = startLockHammer(cluster.leader.url, "ctl", 2);
    hammers.push(locks);
    await sleep(300);
    await confirmLeader(cluster);
    const stoppedAt = performance.now();
    victim.kill("SIGSTOP");
    const takeover = await awaitTakeover(cluster, 15_000);
    const probe = await firstServed(cluster, takeover.leader.url, "ctl");
    // L1 resumes cut off from PostgreSQL (its proxy drops everything), so nothing but its gate can
    // stop it serving: a renewal answer that L1 happened to read before the waiting requests would
    // end its term first and hide a missing gate (the half with the rule removed then proved nothing).
    cluster.leader.proxy.setFaults(true);
    victim.kill("SIGCONT");
    const resumedAt = performance.now();
    await sleep(LEADER_LEASE_MS);
    const [, lockCalls] = await Promise.all([timestamps.stop(), locks.stop()]);
    // New connections pass again (one that lost a chunk in the blackhole stays dead; L1's pool
    // drops it after its statement timeout). Every renewal pass, failed or not, logs each live
    // term's serve interval, so the lines below hold L1's whatever its renewals answer.
    cluster.leader.proxy.setFaults(false);
    await sleep(LEADER_LEASE_MS);
    const lines = memberLines(cluster);
    const victimIndex = cluster.members.indexOf(cluster.leader);
    // Answers L1's old term gave after resuming: below the new leader's first number (a term L1 may
    // get back later, once balancing hands the shard back, answers above it).
    const staleAfterResume = timestamps.answers.filter((a) => a.receivedAt > resumedAt && a.first < probe.first).length;
    const violations = new Violations();
    const checked = {
      [GATE_CHECK]: checkServeIntervals(serveIntervals(lines), violations),
      "timestamps unique and real-time ordered": checkTimestampOrder([...timestamps.answers, probe], violations),
    };
    if (!serveIntervals(lines).some((i) => i.server === victimIndex)) throw new ControlSetupError("gate control proves nothing: the leader logged no serve interval");
    // L1's own record of when its old term (the one begun before the pause) last served, against
    // when it resumed, both on this machine's wall clock: > 0 means it served after resuming. An
    // answer *received* after the resume may have been served before the pause (SIGSTOP can land
    // between taking the number and writing the answer), so the client-side count above cannot
    // tell the two apart; the server's serve time can.
    const stoppedWall = performance.timeOrigin + stoppedAt;
    const oldTermTo = Math.max(...serveIntervals(lines).filter((i) => i.server === victimIndex && i.from < stoppedWall).map((i) => i.to));
    const servedAfterResumeMs = oldTermTo - (performance.timeOrigin + resumedAt);
    return {
      ruleRemoved,
      testBreak,
      violations,
      checked,
      facts: { pausedMs: resumedAt - stoppedAt, takeoverMs: takeover.at - stoppedAt, staleAnswersAfterResume: staleAfterResume, servedAfterResumeMs },
      operations: [...timestamps.statuses.values()].reduce((s, n) => s + n, 0) + lockCalls + 1,
      elapsedMs: performance.now() - started,
    };
  } finally {
    cluster.leader.proxy.setFaults(false);
    // A set-up failure leaves loops running: stop them; their calls end once the servers are gone.
    const stopped = Promise.all(hammers.map((h) => h.stop()));
    await closeControlCluster(cluster);
    await stopped;
  }
}
