import { shardOf } from "@leasehold/protocol";
import { checkFencingOrder, checkLeaseOverlap } from "../history/index.js";
import { SeededRandom, deriveSeed } from "../seeded-random.js";
import { Violations } from "../violations.js";
import { checkNoLockLost, type NoLockLostFigures } from "./check-no-lock-lost.js";
import { startFixedIdMembers, type ClusterMember } from "./cluster-members.js";
import { startClusterWorkload } from "./cluster-workload.js";
import { sleep } from "./control-cluster.js";
import { FailureLog } from "./failure-log.js";
import { ExchangeLog } from "./exchange-log.js";
import { writeFailureEvidence } from "./failure-evidence.js";
import { describeProbeGrant, startHeldProbers } from "./held-probers.js";
import { startLockKeepers, type KeptHold } from "./lock-keepers.js";
import { shardEvents } from "./standby-scenario.js";
import { createRunSchema, type RunSchema } from "./pg-run-schema.js";
import { leaseRows, waitWhole } from "./standby-rows.js";

/** One run of {@link runRepeatedCrash}. */
export interface RepeatedCrashOptions {
  readonly seed: number;
  /** How many times one of the three servers is killed (SIGKILL) and restarted. */
  readonly kills: number;
  /** `--leader-lease-ms` (issue 29: 1,500). */
  readonly leaderLeaseMs: number;
  /** `--lease-ms` (issue 29: 8,000; the locks' `validForMs` is half of it). */
  readonly leaseMs: number;
  /** `--shards` (issue 29: the default 64, so each server leads about 21 and balance moves many). */
  readonly shards: number;
  /** Namespaces holding a lock each (issue 29: 12), each on a shard of its own. */
  readonly namespaces: number;
  /** Namespaces of the light load, on shards of their own (none of the held locks'). */
  readonly loadNamespaces: number;
  /** How long the cluster stays whole, balanced and quiet of faults before each kill. */
  readonly quietMs: number;
  /** `LEASEHOLD_TEST_BREAK` for every server (a negative control). Default none. */
  readonly testBreak?: string | undefined;
}

/** One kill: whom, and how long the cluster took to be whole and balanced again. */
export interface CrashCycle {
  readonly member: number;
  /** Shards the victim led when it was killed. */
  readonly led: number;
  /** Shards the survivors handed over to it while it was dead (issue 29 item 3: each loses its locks). */
  readonly handedToDead: number;
  /** Balance moves the survivors began towards it while it was dead (a member that does not answer is no taker). */
  readonly movesToDead: number;
  readonly wholeAfterMs: number;
}

/** What a run found. */
export interface RepeatedCrashResult {
  readonly options: RepeatedCrashOptions;
  readonly cycles: readonly CrashCycle[];
  readonly violations: Violations;
  readonly holds: readonly KeptHold[];
  readonly noLockLost: NoLockLostFigures;
  /**
   * Locks held from before the first kill to the end of the run by the same grant (the keepers'
   * first holds): `namespaces` when nothing was lost or lapsed.
   */
  readonly heldThroughout: number;
  /** Probes of the held descriptors (a lock without waiting, every second per namespace). */
  readonly probes: number;
  /** Probes granted: each a second holder of a held descriptor. */
  readonly secondHolders: number;
  /** Hand-overs given up with the shard kept (its gate reopened): harmless, counted to show they happened. */
  readonly handOversKept: number;
  /** Log lines of a hand-over that released its shard (issue 29 item 3: every lock on it lost). */
  readonly handOversReleased: number;
  /**
   * Terms the servers lost because their gates closed (renewals slower than the gate allows: a
   * stalled database or a starved process), a failure of its own on top of the kill.
   */
  readonly gateClosures: number;
  /** Calls the clients made: the light load's, the keepers' locks and refreshes, the probes. */
  readonly calls: number;
  readonly elapsedMs: number;
  /**
   * With a violation (or `LEASEHOLD_EVIDENCE=1`): the file (under the temporary directory) holding
   * every member's log lines, each hold's refreshes with the server that answered, the probe grants
   * and every exchange.
   */
  readonly evidencePath: string | undefined;
}

/** The check that every namespace's first hold is held to the end. */
export const HELD_THROUGHOUT_CHECK = "every held lock stays held through every kill";
/** The check that no probe is granted a held descriptor. */
export const SECOND_HOLDER_CHECK = "no second holder of a held descriptor";

/** `<prefix><i>` names on `count` distinct shards, none of `taken` (which gets theirs added). */
function namespacesOnDistinctShards(prefix: string, count: number, shards: number, taken: Set<number>): string[] {
  const names: string[] = [];
  for (let i = 0; names.length < count && taken.size < shards; i++) {
    const shard = shardOf(`${prefix}${i}`, shards);
    if (taken.has(shard)) continue;
    taken.add(shard);
    names.push(`${prefix}${i}`);
  }
  return names;
}

/** Wait until every member leads at least its floor share of the shards (balance done), `timeoutMs` at most. */
async function waitBalanced(schema: RunSchema, serverIds: readonly string[], shards: number, timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  const floor = Math.floor(shards / serverIds.length);
  for (;;) {
    const rows = await leaseRows(schema);
    const led = serverIds.map((id) => rows.filter((r) => r.live && r.holder === id).length);
    if (led.every((n) => n >= floor)) return;
    if (performance.now() > deadline) throw new Error(`the cluster was not balanced within ${timeoutMs} ms: ${serverIds.map((id, i) => `${id} leads ${led[i]}`).join(", ")}`);
    await sleep(100);
  }
}

/** Wait until no live row names `serverId` as its holder (its shards were taken over), `timeoutMs` at most. */
async function waitTakenFrom(schema: RunSchema, serverId: string, timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const rows = await leaseRows(schema);
    const still = rows.filter((r) => r.live && r.holder === serverId).map((r) => r.shard);
    if (still.length === 0) return;
    if (performance.now() > deadline) throw new Error(`shards ${still.join(", ")} were still led by the killed ${serverId} after ${timeoutMs} ms`);
    await sleep(50);
  }
}

/** How long the cluster may take to be whole and balanced again after a kill (64 shards, a loaded 2-core machine). */
const WHOLE_TIMEOUT_MS = 90_000;

/**
 * Issue 29 item 3, from outside: three CLI servers (`--replicas 1`, the default) over one
 * PostgreSQL schema, restarted in place with their own `--server-id`. A held lock in each of
 * `namespaces` namespaces (one per shard), refreshed every second by its keeper and probed every
 * second by another client (a lock without waiting: a grant is a second holder), beside a light
 * load on other namespaces (the cluster workload, one client per namespace, each loop pausing a
 * quarter second between calls). Then `kills` times: wait until the cluster is whole (every shard led with an in-sync
 * standby) and balanced, stay quiet for `quietMs`, SIGKILL a random member, restart it. The checks:
 * no lock lost to a single failure, no overlapping holds, fencing order, and every first hold
 * held to the end (no second holder of a held descriptor, no lapse).
 */
export async function runRepeatedCrash(options: RepeatedCrashOptions): Promise<RepeatedCrashResult> {
  const started = performance.now();
  const violations = new Violations();
  const schema = await createRunSchema();
  const members: ClusterMember[] = [];
  let stopLoads: (() => Promise<unknown>) | undefined;
  let exchanges: ExchangeLog | undefined;
  try {
    members.push(...(await startFixedIdMembers(3, options.seed, schema, options, "rc-s", options.testBreak)));
    const ids = members.map((m) => m.serverId!);
    await waitWhole(schema, ids, options.leaderLeaseMs, WHOLE_TIMEOUT_MS);
    await waitBalanced(schema, ids, options.shards, WHOLE_TIMEOUT_MS);
    const taken = new Set<number>();
    const namespaces = namespacesOnDistinctShards("rc-held-", options.namespaces, options.shards, taken);
    const loadNamespaces = namespacesOnDistinctShards("rc-load-", options.loadNamespaces, options.shards, taken);
    const baseUrls = members.map((m) => m.url);
    const deadlineMs = 2_500;
    const requestTimeoutMs = 1_500;
    const workload = startClusterWorkload(
      { baseUrls, namespaces: loadNamespaces, clientsPerNamespace: 1, descriptors: 2, deadlineMs, requestTimeoutMs, settleBoundMs: 3_500, holdMaxMs: 200, paceMs: 250, seed: deriveSeed(options.seed, 1) },
      violations,
    );
    // Holds that last the whole run (until stop), refreshed every second; nothing else is asked of
    // their namespaces but the probes, so their shards stay idle, their standbys in sync.
    exchanges = new ExchangeLog(() => workload.recorder.now());
    const forever = 24 * 3_600_000;
    const keepers = startLockKeepers(
      { baseUrls, namespaces, keepersPerNamespace: 1, holdMinMs: forever, holdMaxMs: forever, refreshEveryMs: 1_000, deadlineMs, requestTimeoutMs, seed: deriveSeed(options.seed, 3), exchanges },
      workload.recorder,
      workload.counters,
    );
    stopLoads = () => Promise.all([workload.stop(), keepers.stop()]);
    const failures = new FailureLog(() => workload.recorder.now());
    const rng = new SeededRandom(deriveSeed(options.seed, 2));
    // Every namespace's first hold before the first kill.
    const holdsBy = performance.now() + 20_000;
    while (new Set(keepers.holds.map((h) => h.key)).size < namespaces.length) {
      if (performance.now() > holdsBy) throw new Error(`only ${new Set(keepers.holds.map((h) => h.key)).size} of ${namespaces.length} namespaces hold their lock after 20 s`);
      await sleep(50);
    }
    const firstHolds = new Set(namespaces.map((ns) => keepers.holds.find((h) => h.key === `${ns}/k`)!.holder));
    // Probes start only now that every `k` is held: started with the keepers, a probe that came
    // before a keeper's first grant (a slow start on a loaded machine) found `k` free and was
    // granted, a "second holder" of a descriptor nobody held yet (fencing token 1, the keeper's
    // lock then granted behind it under the same leaderId).
    const probers = startHeldProbers({ baseUrls, namespaces, everyMs: 1_000, requestTimeoutMs, recorder: workload.recorder, exchanges });
    // Probes stop first: a probe in flight when a keeper unlocks at stop would be granted.
    stopLoads = () => probers.stop().then(() => Promise.all([workload.stop(), keepers.stop()]));
    const cycles: CrashCycle[] = [];
    for (let k = 0; k < options.kills; k++) {
      await sleep(options.quietMs);
      const victim = rng.pick(members);
      const led = (await leaseRows(schema)).filter((r) => r.live && r.holder === victim.serverId).length;
      const killedWall = Date.now();
      victim.server.child.kill("SIGKILL");
      failures.down(victim.index, "SIGKILL");
      const killedAt = performance.now();
      await victim.server.exited;
      // Restarted only once every shard it led was taken over and its member row aged out (two
      // leader leases), as a supervisor restarts a crashed server some seconds later: until then
      // its row is still fresh and says ready, the window in which survivors balanced shards to it
      // (a restarted process says joining at once, and is no balance target for a leader lease).
      await waitTakenFrom(schema, victim.serverId!, WHOLE_TIMEOUT_MS);
      await sleep(2 * options.leaderLeaseMs);
      const restartedWall = Date.now();
      await victim.restart();
      const whileDead = members
        .filter((m) => m !== victim)
        .flatMap((m) => m.lines())
        .filter((l) => (l.time as number) >= killedWall && (l.time as number) <= restartedWall);
      const handedToDead = whileDead.filter((l) => l.msg === "shard handed over" && l.standby === victim.serverId).length;
      const movesToDead = whileDead.filter((l) => l.msg === "getting an in-sync standby before handing the shard over" && l.taker === victim.serverId).length;
      await waitWhole(schema, ids, options.leaderLeaseMs, WHOLE_TIMEOUT_MS);
      await waitBalanced(schema, ids, options.shards, WHOLE_TIMEOUT_MS);
      failures.up(victim.index);
      cycles.push({ member: victim.index, led, handedToDead, movesToDead, wholeAfterMs: performance.now() - killedAt });
    }
    await sleep(options.quietMs);
    await stopLoads();
    stopLoads = undefined;
    const history = workload.recorder.history(Object.fromEntries([...workload.counters].map(([key, c]) => [key, c.value])));
    for (const check of [checkLeaseOverlap(history), checkFencingOrder(history)]) for (let n = 0; n < check.violations; n++) violations.add(check.rule, check.examples[n] ?? "(more of the same)");
    const noLockLost = checkNoLockLost(keepers.holds, failures, violations, shardEvents(members, options.shards));
    for (const grant of probers.granted) violations.add(SECOND_HOLDER_CHECK, describeProbeGrant(grant, keepers.holds));
    let heldThroughout = 0;
    for (const h of keepers.holds.filter((h) => firstHolds.has(h.holder))) {
      if (violations.expect(h.end === "unlocked", HELD_THROUGHOUT_CHECK, () => `${h.key}: hold ${h.holder} ended ${h.end} at ${h.endedAt?.toFixed(0)} ms (${h.detail ?? "-"}), last refreshed at ${h.lastRefreshedAt.toFixed(0)} ms`)) heldThroughout++;
    }
    const lines = members.flatMap((m) => m.lines()).filter((l) => typeof l.msg === "string" && l.msg.startsWith("hand-over"));
    // LEASEHOLD_EVIDENCE=1 writes it for a passing run too (to read a healthy run beside a failing one).
    const evidencePath =
      violations.total === 0 && process.env.LEASEHOLD_EVIDENCE !== "1"
        ? undefined
        : writeFailureEvidence({
            scenario: "repeated-crash",
            seed: options.seed,
            violations: violations.describe(),
            recorderNow: workload.recorder.now(),
            wallNow: Date.now(),
            members: members.map((m) => ({ index: m.index, url: m.url, serverId: m.serverId, lines: m.lines() })),
            holds: keepers.holds,
            probeGrants: probers.granted,
            exchanges: exchanges.exchanges,
            extra: { cycles, failures: failures.failures },
          });
    return {
      options,
      cycles,
      violations,
      holds: keepers.holds,
      noLockLost,
      heldThroughout,
      probes: probers.calls.probes,
      secondHolders: probers.calls.granted,
      gateClosures: members.flatMap((m) => m.lines()).filter((l) => typeof l.msg === "string" && l.msg.startsWith("serving gate closed")).length,
      handOversKept: lines.filter((l) => (l.msg as string).includes("keeping the shard")).length,
      handOversReleased: lines.filter((l) => (l.msg as string).includes("releasing the shard")).length,
      calls: workload.tally.calls + keepers.calls.locks + keepers.calls.refreshes + probers.calls.probes,
      elapsedMs: performance.now() - started,
      evidencePath,
    };
  } finally {
    const stopped = stopLoads?.();
    await Promise.all(members.map((m) => m.close()));
    await stopped;
    await exchanges?.close();
    await schema.drop();
  }
}
