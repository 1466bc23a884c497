import { LockClient } from "@leasehold/client";
import { pino } from "pino";
import { HistoryRecorder } from "../history/index.js";
import { holdChecks, type ControlHalf } from "./control-half.js";
import { awaitTakeover, closeControlCluster, ControlSetupError, memberLines, sleep, startControlCluster } from "./control-cluster.js";

/** The check the lease-wait control targets (history checker rule (a)). */
export const LEASE_WAIT_CHECK = "(a) no conflicting lease guarantees overlap";

/** Client lease (`--lease-ms`): far longer than a takeover, so the first holder's promise (half of it) spans one. */
const LEASE_MS = 10_000;
const LEADER_LEASE_MS = 700;

/**
 * Lease-wait control, one half. Client A takes an exclusive lock on `d` from the shard's leader L1
 * and keeps it (its refresher runs); its hold is recorded with the lease it was promised
 * (`requestSentAt + validForMs`, 5 s). Client B asks for `d` with a long wait and is queued behind
 * A. L1 is SIGKILLed. The new leader must not grant `d` until every lease L1 could have given has
 * run out (`valid_for_ms` of the lease row, the 5 s L1 answered, plus the rate margin, counted
 * from its acquisition), which is after A's promise: no overlap. With `LEASEHOLD_TEST_BREAK=lease-wait` it grants B at takeover, inside A's
 * promise: the overlap check fires. Both clients route with `baseUrls` = all three members.
 *
 * Throws a `ControlSetupError` (the run proves nothing) when A was not granted by L1's term or A's
 * promise did not reach past the moment the takeover was seen (`facts.promiseBeyondTakeoverMs`
 * must be > 0: else even a broken server could not overlap, and the control would be vacuous); an
 * Error when B is not granted at all (a server bug).
 */
export async function runLeaseWaitControl(seed: number, ruleRemoved: boolean): Promise<ControlHalf> {
  const started = performance.now();
  const testBreak = ruleRemoved ? "lease-wait" : undefined;
  const env = testBreak === undefined ? undefined : { LEASEHOLD_TEST_BREAK: testBreak };
  const cluster = await startControlCluster(seed, { leaderLeaseMs: LEADER_LEASE_MS, leaseMs: LEASE_MS, env, replicas: 0 });
  const logger = pino({ level: "silent" });
  const baseUrls = cluster.members.map((m) => m.url);
  const clientA = LockClient.http({ baseUrls, namespace: "ctl", logger, requestTimeoutMs: 2_000 });
  const clientB = LockClient.http({ baseUrls, namespace: "ctl", logger, requestTimeoutMs: 2_000 });
  try {
    const recorder = new HistoryRecorder();
    const lock = [{ descriptor: "d", mode: "exclusive" as const }];
    const aSent = recorder.now();
    // Long enough to wait out a new leader's lease-wait, should the shard have changed hands while the cluster formed.
    const a = await clientA.lock(lock, { acquireTimeoutMs: 15_000 });
    const aReceived = recorder.now();
    if (a.status !== "acquired") {
      const acquired = memberLines(cluster).flatMap((l, i) => l.filter((x) => x.msg === "shard acquired" || x.msg === "shard lost").map((x) => `member ${i} ${String(x.msg)} epoch ${String(x.epoch)} (${String(x.reason)}, lock delay ${String(x.lockDelayMs)})`));
      throw new ControlSetupError(`lease-wait control: A was not granted d in 15 s; ${acquired.join("; ")}`);
    }
    if (a.lease.leaderId !== cluster.leaderId) throw new ControlSetupError(`lease-wait control: A was granted by term ${a.lease.leaderId}, not the leader's ${cluster.leaderId}`);
    const aPromise = aSent + a.lease.validForMs;
    recorder.grant({ holder: "A", descriptor: "d", mode: "exclusive", fencingToken: a.acquired[0]!.fencingToken, requestSentAt: aSent, grantReceivedAt: aReceived, guaranteeEndsAt: aPromise });
    const bSent = recorder.now();
    const bCall = clientB.lock(lock, { acquireTimeoutMs: 30_000 });
    // Awaited below; if set-up fails first, closing the client ends it, and that is not an error here.
    bCall.catch(() => undefined);
    // Let B's request reach L1 and queue behind A (it is re-sent to the new leader after the kill).
    await sleep(150);
    const killedAt = performance.now();
    cluster.leader.server.child.kill("SIGKILL");
    const takeover = await awaitTakeover(cluster, 15_000);
    const b = await bCall;
    const bReceived = recorder.now();
    if (b.status !== "acquired") throw new Error("lease-wait control: B was not granted d within 30 s");
    recorder.grant({ holder: "B", descriptor: "d", mode: "exclusive", fencingToken: b.acquired[0]!.fencingToken, requestSentAt: bSent, grantReceivedAt: bReceived, guaranteeEndsAt: bSent + b.lease.validForMs });
    recorder.release("B");
    clientB.tryUnlock([b.token]);
    const promiseBeyondTakeoverMs = aPromise - takeover.at;
    if (promiseBeyondTakeoverMs <= 0) {
      throw new ControlSetupError(`lease-wait control is vacuous: A's promise ended ${(-promiseBeyondTakeoverMs).toFixed(0)} ms before the takeover was seen`);
    }
    const { violations, checked } = holdChecks(recorder.history({}));
    return {
      ruleRemoved,
      testBreak,
      violations,
      checked,
      facts: {
        takeoverMs: takeover.at - killedAt,
        promiseBeyondTakeoverMs,
        // Negative: B was granted inside A's promise.
        bGrantAfterPromiseMs: bReceived - aPromise,
        bGrantAfterTakeoverMs: bReceived - takeover.at,
      },
      operations: 2,
      elapsedMs: performance.now() - started,
    };
  } finally {
    await Promise.all([clientA.close(), clientB.close()]);
    await closeControlCluster(cluster);
  }
}
