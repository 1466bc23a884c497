import type { LockClient } from "@leasehold/client";
import { setTimeout as sleep } from "node:timers/promises";
import type { CounterResource, ResourceAccess } from "../../../src/fenced-resource/index.js";
import type { HistoryRecorder, HoldMode } from "../../../src/history/index.js";
import type { WorkloadOptions } from "./workload-options.js";
import type { WorkloadStats } from "./workload-stats.js";

/** What one hold needs: the run's shared state and the holder's two clients. */
export interface HoldContext {
  /** The run's shape. */
  readonly options: WorkloadOptions;
  /** Where grants and releases go (the resources record their own operations there too). */
  readonly recorder: HistoryRecorder;
  /** One resource per descriptor. */
  readonly resources: ReadonlyMap<string, CounterResource>;
  /** The holders' counts, shared by all of them. */
  readonly stats: WorkloadStats;
  /** The holder's everyday client: its refresher keeps held locks alive. */
  readonly client: LockClient;
  /** The same holder's client for holds that will pause: its refresher never wakes, as in a GC pause. */
  readonly pausingClient: LockClient;
}

function pick<T>(items: readonly T[]): T {
  const item = items[Math.floor(Math.random() * items.length)];
  if (item === undefined) throw new Error("pick from an empty list");
  return item;
}

/** Scheduled pauses alternate between the modes; other holds pick one at random. */
function holdMode(options: WorkloadOptions, index: number, pauses: boolean): HoldMode {
  if (pauses) return Math.floor(index / options.pauseEvery) % 2 === 0 ? "exclusive" : "shared";
  return Math.random() < options.exclusiveShare ? "exclusive" : "shared";
}

function message(err: unknown): string {
  return err instanceof Error ? `${err.name}: ${err.message}` : String(err);
}

/**
 * One hold: lock a random descriptor in a random mode, use its resource, release.
 *
 * An exclusive holder increments the counter (read, then write the value read plus one); a
 * shared holder reads it twice. Before acting, a holder checks its guarantee on its own clock
 * (request send time plus `validForMs`); a grant that waited in the queue for more than half of
 * that is renewed first with `refresh`, since the lease counted from the request is then mostly
 * spent. A pausing hold does its first operation, then sleeps well past the server's lease on a
 * client that does not refresh (so the server lets the lock lapse and grants it to others), and
 * does its second operation with its old token without checking anything, as a process resuming
 * from a GC pause would; the fenced resource must refuse it once a newer holder has used it.
 */
export async function runHold(ctx: HoldContext, holder: string): Promise<void> {
  const { options, recorder, stats } = ctx;
  const descriptor = pick([...ctx.resources.keys()]);
  const index = stats.lockCalls++;
  const pauses = index % options.pauseEvery === options.pauseEvery - 1;
  const mode = holdMode(options, index, pauses);
  const client = pauses ? ctx.pausingClient : ctx.client;
  const resource = ctx.resources.get(descriptor);
  if (resource === undefined) throw new Error(`no resource for ${descriptor}`);

  const requestSentAt = recorder.now();
  const answer = await client.lock([{ descriptor, mode }], { acquireTimeoutMs: options.acquireTimeoutMs });
  const grantReceivedAt = recorder.now();
  if (answer.status === "timeout") {
    stats.timeouts++;
    return;
  }
  const fencingToken = answer.acquired[0]?.fencingToken;
  if (fencingToken === undefined) throw new Error(`grant without a fencing token for ${descriptor}`);
  stats.grants[mode]++;
  if (!client.isHeld(answer.token)) stats.notHeldOnArrival++;
  const validForMs = answer.lease.validForMs;
  if (!stats.validForMs.includes(validForMs)) stats.validForMs.push(validForMs);
  let guaranteeEndsAt = requestSentAt + validForMs;
  recorder.grant({ holder, descriptor, mode, fencingToken, requestSentAt, grantReceivedAt, guaranteeEndsAt });
  try {
    if (grantReceivedAt - requestSentAt > validForMs / 2) {
      stats.renewedAfterWait++;
      const refreshSentAt = recorder.now();
      const renewed = await client.refresh([answer.token]);
      if (renewed.lease.leaderId === answer.lease.leaderId && renewed.refreshed.includes(answer.token)) {
        guaranteeEndsAt = Math.max(guaranteeEndsAt, refreshSentAt + renewed.lease.validForMs);
        recorder.extendGuarantee(holder, guaranteeEndsAt);
      } else {
        stats.renewalsRefused++;
      }
    }
    const access: ResourceAccess = { holder, fencingToken, mode };
    if (recorder.now() >= guaranteeEndsAt) {
      stats.expiredBeforeUse++;
      return;
    }
    const first = resource.read(access);
    if (!first.accepted) {
      stats.firstOperationRefused[mode]++;
      return;
    }
    if (pauses) {
      const pauseMs = options.pauseMs[0] + Math.random() * (options.pauseMs[1] - options.pauseMs[0]);
      stats.pauses[mode]++;
      stats.pausedMs += pauseMs;
      await sleep(pauseMs);
    } else {
      // A little work between read and write, so that holders interleave on the event loop.
      await sleep(Math.random() < 0.5 ? 0 : 1 + Math.random() * 3);
      if (recorder.now() >= guaranteeEndsAt) {
        stats.expiredMidHold++;
        return;
      }
    }
    const second = mode === "exclusive" ? resource.write(access, first.value + 1) : resource.read(access);
    if (pauses) {
      if (second.accepted) stats.afterPause.accepted++;
      else stats.afterPause.refused++;
    }
  } finally {
    recorder.release(holder);
    await release(ctx, client, answer.token);
  }
}

async function release(ctx: HoldContext, client: LockClient, token: string): Promise<void> {
  if (Math.random() < 0.5) {
    ctx.stats.releases.tryUnlock++;
    client.tryUnlock([token]);
    return;
  }
  ctx.stats.releases.unlock++;
  try {
    await client.unlock([token]);
  } catch (err) {
    ctx.stats.errors.push(`unlock: ${message(err)}`);
  }
}
