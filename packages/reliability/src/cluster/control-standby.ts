import type { LockResponse } from "@leasehold/protocol";
import { LockClient } from "@leasehold/client";
import { pino } from "pino";
import { HistoryRecorder } from "../history/index.js";
import type { ClusterMember } from "./cluster-members.js";
import { closeControlCluster, ControlSetupError, postJson, sleep, startControlCluster, type ControlCluster } from "./control-cluster.js";
import { holdChecks, type ControlHalf } from "./control-half.js";
import { LEASE_WAIT_CHECK } from "./control-lease-wait.js";
import { leaseRows, type LeaseRow } from "./standby-rows.js";

/** The standby controls, named after the rule each removes (`LEASEHOLD_TEST_BREAK`). */
export const STANDBY_CONTROL_NAMES = ["answer-before-ack", "promote-any-replica"] as const;
/** One of {@link STANDBY_CONTROL_NAMES}. */
export type StandbyControlName = (typeof STANDBY_CONTROL_NAMES)[number];

/** The check both target: no two holders' lease guarantees overlap (history checker rule (a)). */
export const STANDBY_CONTROL_CHECK = LEASE_WAIT_CHECK;

const LEADER_LEASE_MS = 1_000;
/**
 * Long, so the first holder's promise (half of it, 10 s) spans the takeover and B's retries on a
 * loaded machine (the client backs off while no server leads): a grant inside it is an overlap.
 */
const LEASE_MS = 20_000;

/** Poll the shard's row until `until` holds; throws a set-up error with the last row after `timeoutMs`. */
async function rowWhen(cluster: ControlCluster, until: (row: LeaseRow) => boolean, what: string, timeoutMs: number): Promise<LeaseRow> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const row = (await leaseRows(cluster.schema))[0];
    if (row !== undefined && until(row)) return row;
    if (performance.now() > deadline) throw new ControlSetupError(`${what} within ${timeoutMs} ms: ${JSON.stringify(row)}`);
    await sleep(20);
  }
}

/** Resolve once `url`'s `leasehold_replication_standby_lag_entries` is at least 1; throws a set-up error after `timeoutMs`. */
async function standbyLag(url: string, timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const text = await fetch(`${url}/metrics`, { signal: AbortSignal.timeout(1_000) }).then((r) => r.text()).catch(() => "");
    const lag = Number(/^leasehold_replication_standby_lag_entries (\d+)/m.exec(text)?.[1] ?? 0);
    if (lag >= 1) return;
    if (performance.now() > deadline) throw new ControlSetupError(`the leader showed no unacknowledged entry within ${timeoutMs} ms`);
    await sleep(5);
  }
}

/**
 * B: ask `url` alone for `descriptor` without waiting (`acquireTimeoutMs` 0), every 10 ms, until it
 * is granted; answers the grant with the send time of the request that got it. Polling one server
 * directly, not through a client's backoff, so B is granted the moment S serves x (S may hand the
 * shard on by balance soon after a takeover). Throws after `timeoutMs`.
 */
async function grantAt(url: string, descriptor: string, timeoutMs: number): Promise<Extract<LockResponse, { status: "acquired" }> & { sentAt: number }> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const sentAt = performance.now();
    const res = await postJson(`${url}/v1/namespaces/ctl/lock`, { locks: [{ descriptor, mode: "exclusive" }], acquireTimeoutMs: 0 }, 2_000).catch(() => undefined);
    const body = res?.body as LockResponse | undefined;
    if (res?.status === 200 && body?.status === "acquired") return { ...body, sentAt };
    if (performance.now() > deadline) throw new Error(`standby control: B was not granted ${descriptor} at ${url} within ${timeoutMs} ms`);
    await sleep(10);
  }
}

/**
 * A standby control, one half, on two members and one shard (`--leader-lease-ms 1000 --lease-ms
 * 20000`, `LEASEHOLD_TEST_REPLICATION_WINDOW=1` in both halves): the leader L and its in-sync
 * standby S. S is SIGSTOPped; another client asks L for `y` (its entry goes to S and stays in
 * flight, one message at a time), then client A asks L for `x`
 * (its entry is never sent); L is SIGKILLed, S SIGCONTed (it applies y, never x), B polls S for
 * `x`; S takes the shard over. A keeps `x` until a second after the takeover, then unlocks (B, if
 * granted first, keeps it 300 ms); B's grant must not fall inside A's hold.
 *
 * - `answer-before-ack`: L's link to PostgreSQL is cut as S stops, so L cannot record
 *   `in_sync = false`; the row still names S in sync when L dies, and S takes over with its table.
 *   Intact, L never answers A (A is granted by S after the takeover; B waits for A). Removed, L
 *   answers A once S is late, before the record (which never lands): S's table lacks A's grant and
 *   grants B inside A's hold.
 * - `promote-any-replica`: L records `in_sync = false` (its link is fine) and grants A; S resumes
 *   with a table that lacks A's grant. Intact, S does not promote it (the row says not in sync):
 *   it takes the shard empty, under a new `leaderId`, with the lease-wait, and B is granted after
 *   A's promise. Removed, S promotes its stale table at once and grants B inside A's hold.
 *
 * Facts: `aAnsweredBeforeKill` (1 when L answered A before it died), `inSyncAtKill` (the row at
 * the kill), `takeoverMs`, `bGrantAfterPromiseMs` (negative: B granted inside A's promise).
 */
export async function runStandbyControl(name: StandbyControlName, seed: number, ruleRemoved: boolean): Promise<ControlHalf> {
  const started = performance.now();
  const testBreak = ruleRemoved ? name : undefined;
  // Both halves keep one replication message in flight, so y's entry is in flight to the stopped
  // standby and x's is never sent. With the default window x's entry would sit in the stopped
  // standby's socket and be applied once it resumes: nothing answered would then be missing from
  // it, and the removed half could not show what the rule prevents.
  const window = { LEASEHOLD_TEST_REPLICATION_WINDOW: "1" };
  const env = testBreak === undefined ? window : { ...window, LEASEHOLD_TEST_BREAK: testBreak };
  const cluster = await startControlCluster(seed, { leaderLeaseMs: LEADER_LEASE_MS, leaseMs: LEASE_MS, env, keepServerId: true }, 2);
  const logger = pino({ level: "silent" });
  const baseUrls = cluster.members.map((m) => m.url);
  const clientA = LockClient.http({ baseUrls, namespace: "ctl", logger, requestTimeoutMs: 2_000 });
  const clientB = LockClient.http({ baseUrls, namespace: "ctl", logger, requestTimeoutMs: 2_000 });
  const leader = cluster.leader;
  const standby = cluster.members.find((m) => m !== leader) as ClusterMember;
  try {
    await rowWhen(cluster, (r) => r.holder === leader.serverId && r.standbyId === standby.serverId && r.inSync, "the standby was not in sync", 15_000);
    const recorder = new HistoryRecorder();
    const lock = [{ descriptor: "x", mode: "exclusive" as const }];
    // The namespace's bound is in place (a first grant needs PostgreSQL) and the stream is idle.
    const warm = await clientA.lock([{ descriptor: "w", mode: "exclusive" }], { acquireTimeoutMs: 10_000 });
    if (warm.status === "acquired") await clientA.unlock([warm.token]);
    await sleep(100);
    if (name === "answer-before-ack") leader.proxy.setFaults(true);
    standby.server.child.kill("SIGSTOP");
    // y's entry goes to the stopped standby and stays in flight (one message at a time), so x's
    // entry is never sent: the standby, once resumed, holds y but not x.
    const y = clientB.lock([{ descriptor: "y", mode: "exclusive" }], { acquireTimeoutMs: 30_000 });
    y.catch(() => undefined);
    // x only once y's entry is in L's log unacknowledged (so in flight, alone, from L's next turn
    // on): in one event-loop turn with y, x would travel in y's message. Well within the standby's
    // lateness (a third of a leader lease from y), so the late round finds x waiting too.
    await standbyLag(leader.url, 5_000);
    await sleep(20);
    const aSent = recorder.now();
    let aReceived: number | undefined;
    const aCall = clientA.lock(lock, { acquireTimeoutMs: 30_000 }).finally(() => (aReceived = recorder.now()));
    // answer-before-ack: past the standby's lateness (a third of a leader lease), before L's gate
    // closes. promote-any-replica: as soon as L answered A (after recording not-in-sync), before
    // its next replication round sends the resumed standby a fresh snapshot.
    if (name === "answer-before-ack") await sleep(0.6 * LEADER_LEASE_MS);
    else await Promise.race([aCall.catch(() => undefined), sleep(3 * LEADER_LEASE_MS)]);
    const inSyncAtKill = (await leaseRows(cluster.schema))[0]?.inSync === true;
    const killedAt = recorder.now();
    leader.server.child.kill("SIGKILL");
    leader.proxy.setFaults(false);
    standby.server.child.kill("SIGCONT");
    const bCall = grantAt(standby.url, "x", 40_000);
    const takeover = rowWhen(cluster, (r) => r.holder === standby.serverId && r.live, "the standby did not take the shard over", 20_000).then(() => recorder.now());
    // Each holder keeps x a while, then unlocks, whoever is granted first: A until a second after
    // the takeover (so a grant to B inside A's hold shows), B for 300 ms.
    const holdA = aCall.then(async (a) => {
      if (a.status !== "acquired") throw new Error(`${name} control: A was not granted x`);
      const at = aReceived ?? recorder.now();
      recorder.grant({ holder: "A", descriptor: "x", mode: "exclusive", fencingToken: a.acquired[0]!.fencingToken, requestSentAt: aSent, grantReceivedAt: at, guaranteeEndsAt: aSent + a.lease.validForMs });
      await sleep(Math.max(0, Math.max(at + 300, (await takeover) + 1_000) - recorder.now()));
      recorder.release("A");
      clientA.tryUnlock([a.token]);
      return { at, promiseEndsAt: aSent + a.lease.validForMs };
    });
    const holdB = bCall.then(async (b) => {
      const at = recorder.now();
      recorder.grant({ holder: "B", descriptor: "x", mode: "exclusive", fencingToken: b.acquired[0]!.fencingToken, requestSentAt: b.sentAt, grantReceivedAt: at, guaranteeEndsAt: b.sentAt + b.lease.validForMs });
      await sleep(300);
      recorder.release("B");
      await postJson(`${standby.url}/v1/namespaces/ctl/unlock`, { tokens: [b.token] }, 5_000).catch(() => undefined);
      return at;
    });
    const [takeoverAt, aHold, bReceived] = await Promise.all([takeover, holdA, holdB]);
    // Locks the standby's promoted table carried (-1: it took the shard empty). y alone (1) shows
    // its table lacked x; 2 means L's next round sent it a fresh snapshot before it died.
    const locksCarried = Number(standby.lines().findLast((l) => l.msg === "standby promoted")?.locksCarried ?? -1);
    if (name === "promote-any-replica" && ruleRemoved && locksCarried > 1) {
      throw new ControlSetupError(`promote-any-replica control proves nothing: the standby got a fresh snapshot (${locksCarried} locks) before L died`);
    }
    const { violations, checked } = holdChecks(recorder.history({}));
    return {
      ruleRemoved,
      testBreak,
      violations,
      checked,
      facts: {
        aAnsweredBeforeKill: aHold.at < killedAt ? 1 : 0,
        inSyncAtKill: inSyncAtKill ? 1 : 0,
        takeoverMs: takeoverAt - killedAt,
        bGrantAfterPromiseMs: bReceived - aHold.promiseEndsAt,
        locksCarried,
      },
      operations: 4,
      elapsedMs: performance.now() - started,
    };
  } finally {
    standby.server.child.kill("SIGCONT");
    await Promise.all([clientA.close(), clientB.close()]);
    await closeControlCluster(cluster);
  }
}
