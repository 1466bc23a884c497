import { isLeaseholdError, type LockClient, type LockMode } from "@leasehold/client";
import type { LoadHistory, LoadOperation } from "./load-history.js";
import type { LostLockLog } from "./lost-lock-log.js";
import type { SeededRandom } from "../seeded-random.js";
import type { ServerIncarnations } from "./server-incarnations.js";
import type { Violations } from "../violations.js";

/** Everything one load worker needs; the scenario builds one per client. */
export interface LoadWorkerContext {
  /** Client number, for the history. */
  readonly id: number;
  /** The client the worker drives (one worker per client). */
  readonly client: LockClient;
  /** The client's `lostLocks` reports. */
  readonly lost: LostLockLog;
  /** Its own random source (seeded). */
  readonly random: SeededRandom;
  /** Descriptors to lock, at random. */
  readonly descriptors: readonly string[];
  /** The server processes, to know whether the one that granted a lock has been killed. */
  readonly servers: ServerIncarnations;
  /** Where operations and values go. */
  readonly history: LoadHistory;
  /** Where broken checks go. */
  readonly violations: Violations;
  /** The leases' `validForMs` (half the server's `--lease-ms`). */
  readonly validForMs: number;
  /** How late after the lease of a killed server's grant the loss report may come (refresher tick, event-loop lag). */
  readonly lostSlackMs: number;
  /** Longest an operation may take on top of its own `acquireTimeoutMs` before it counts as hung. */
  readonly hangBoundMs: number;
  /** True once the load should stop (the worker finishes its current operation). */
  readonly stopped: () => boolean;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * Run `call`, record it, and count a `no-hang` violation if it has not settled `boundMs` after it
 * started (it is still awaited: a hung call then also holds the worker, which the scenario's join
 * bound reports).
 */
async function timed<T>(
  ctx: LoadWorkerContext,
  kind: LoadOperation,
  boundMs: number,
  call: () => Promise<T>,
  outcomeOf: (value: T) => "ok" | "timeout" = () => "ok",
): Promise<{ value: T } | { error: unknown }> {
  const sentAt = performance.now();
  const watchdog = setTimeout(
    () => ctx.violations.add("no-hang", `client ${ctx.id}: ${kind} did not settle within ${boundMs} ms`),
    boundMs,
  );
  try {
    const value = await call();
    ctx.history.record({ client: ctx.id, kind, sentAt, settledAt: performance.now(), outcome: outcomeOf(value) });
    return { value };
  } catch (error) {
    const code = isLeaseholdError(error) ? error.code : String(error);
    ctx.history.record({ client: ctx.id, kind, sentAt, settledAt: performance.now(), outcome: "error", code });
    return { error };
  } finally {
    clearTimeout(watchdog);
  }
}

async function freshTimestamp(ctx: LoadWorkerContext): Promise<void> {
  const sentAt = performance.now();
  const result = await timed(ctx, "timestamp", ctx.hangBoundMs, () => ctx.client.freshTimestamp());
  if ("value" in result) ctx.history.values.push({ kind: "timestamp", value: result.value, sentAt, receivedAt: performance.now() });
}

/** Wait for the loss report of a grant whose server was killed while it was held; record how long it took. */
async function expectLossReport(ctx: LoadWorkerContext, token: string, killedAt: number): Promise<void> {
  const deadline = killedAt + ctx.validForMs + ctx.lostSlackMs;
  const report = await ctx.lost.waitFor(token, deadline);
  ctx.history.orphans.push({ reportedAfterMs: report === undefined ? undefined : report.at - killedAt });
  if (report === undefined) {
    ctx.violations.add(
      "lost-locks-reported",
      `client ${ctx.id}: a lock granted by a killed server was not reported on lostLocks within validForMs + ${ctx.lostSlackMs} ms of the kill`,
    );
  } else {
    ctx.violations.expect(
      report.reason === "leader-changed" || report.reason === "not-refreshed" || report.reason === "lease-expired",
      "lost-locks-reported",
      () => `client ${ctx.id}: a lock of a killed server was reported lost with reason ${report.reason}`,
    );
  }
}

async function lockHoldRelease(ctx: LoadWorkerContext): Promise<void> {
  const { random, client } = ctx;
  const descriptor = random.pick(ctx.descriptors);
  const mode: LockMode = random.chance(0.6) ? "exclusive" : "shared";
  const acquireTimeoutMs = random.int(0, 1000);
  // Decided before the grant, so whether a grant is checked for a loss report does not depend on its fate.
  const waitForLossIfOrphaned = random.chance(0.4);
  const holdMs = random.chance(0.2) ? random.int(200, 1200) : random.int(0, 20);
  const releaseWithTry = random.chance(0.5);

  const sentAt = performance.now();
  const result = await timed(
    ctx,
    "lock",
    acquireTimeoutMs + ctx.hangBoundMs,
    () => client.lock([{ descriptor, mode }], { acquireTimeoutMs }),
    (answer) => (answer.status === "acquired" ? "ok" : "timeout"),
  );
  if (!("value" in result) || result.value.status !== "acquired") return;
  const answer = result.value;
  const receivedAt = performance.now();
  ctx.history.tokens.add(answer.token);
  for (const a of answer.acquired) {
    ctx.history.values.push({ kind: "fencing", value: a.fencingToken, descriptor: a.descriptor, leaderId: answer.lease.leaderId, sentAt, receivedAt });
  }

  await sleep(holdMs);
  const granter = ctx.servers.byLeader(answer.lease.leaderId);
  if (granter === undefined) {
    ctx.violations.add("fencing-across-restarts", `client ${ctx.id}: a lease named a leader id no server process announced`);
  } else if (granter.killedAt !== undefined) {
    if (waitForLossIfOrphaned) await expectLossReport(ctx, answer.token, granter.killedAt);
  } else if (ctx.lost.get(answer.token) !== undefined) {
    ctx.history.lostWhileServerLive++;
  }

  // An orphan not waited for is released at once with tryUnlock: the server is most likely still
  // down, so this is where tryUnlock's unlock calls fail (and must be logged, never thrown).
  const orphanedNow = granter?.killedAt !== undefined && !waitForLossIfOrphaned;
  if (releaseWithTry || orphanedNow) {
    const at = performance.now();
    try {
      client.tryUnlock([answer.token]);
      ctx.history.record({ client: ctx.id, kind: "tryUnlock", sentAt: at, settledAt: performance.now(), outcome: "ok" });
    } catch (err) {
      ctx.history.record({ client: ctx.id, kind: "tryUnlock", sentAt: at, settledAt: performance.now(), outcome: "error", code: String(err) });
      ctx.violations.add("tryUnlock-never-throws", `client ${ctx.id}: tryUnlock threw ${String(err)}`);
    }
    return;
  }
  // Held by the client's own lease clock, from a server that lives: the server promised to keep it.
  const withinLease = client.isHeld(answer.token) && granter?.killedAt === undefined;
  const unlocked = await timed(ctx, "unlock", ctx.hangBoundMs, () => client.unlock([answer.token]));
  if ("value" in unlocked && withinLease && granter?.killedAt === undefined) {
    ctx.violations.expect(
      unlocked.value.includes(answer.token),
      "lease-honoured",
      () => `client ${ctx.id}: unlock of a token still within its lease found it already released`,
    );
  }
}

/**
 * One load loop: until stopped, at random, a fresh timestamp (15 %) or a lock on a random
 * descriptor (exclusive 60 %, shared 40 %, waiting up to 1 s) held for 0–20 ms (or, one time in
 * five, 200–1,200 ms, across refreshes) and released with `tryUnlock` or `unlock`, half each.
 * A grant whose server was SIGKILLed while it was held is, two times in five, kept until the client
 * reports it on `lostLocks` (which must happen within the lease plus slack of the kill), and
 * otherwise released at once with `tryUnlock`.
 */
export async function runLoadWorker(ctx: LoadWorkerContext): Promise<void> {
  while (!ctx.stopped()) {
    if (ctx.random.chance(0.15)) await freshTimestamp(ctx);
    else await lockHoldRelease(ctx);
    await sleep(ctx.random.int(0, 10));
  }
}
