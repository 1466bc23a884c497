import { LeaseholdError, LIMITS, type LockService, type LockWatchSince, type LockWatchUpdate, type StartedTransaction, type Lease } from "@leasehold/protocol";
import type { BatchFunction } from "./autobatcher.js";
import { chunks } from "./chunks.js";

/** One transaction start that also asks for the lock-watch update from `since`. */
export interface WatchedStartAsk {
  readonly since: LockWatchSince | null;
}

/** A started transaction with the lock-watch update as of its start timestamp. */
export interface WatchedStart {
  readonly transaction: StartedTransaction;
  readonly immutableTimestamp: number;
  readonly lease: Lease;
  /** Every lock event on watched descriptors before the start timestamp (after the asked `since`), or a snapshot. */
  readonly lockWatch: LockWatchUpdate;
}

/**
 * Concurrent watched starts share one `transactions/start` call. Its `since` is the oldest of
 * theirs when all follow one log (an update from an older version holds every event a newer
 * follower needs, and its extra events are ones that follower has already applied), else `null`
 * (a snapshot serves everyone). The update is as of the call's start timestamps, which the server
 * assigns in one step, so it is right for every transaction of the call.
 */
export function watchedStartBatch(service: LockService, namespace: string): BatchFunction<WatchedStartAsk, WatchedStart> {
  return async (asks) => {
    const results = new Array<WatchedStart>(asks.length);
    const indexes = asks.map((_, i) => i);
    await Promise.all(
      chunks(indexes, LIMITS.maxTransactionCount).map(async (group) => {
        const answer = await service.startTransactions(namespace, { count: group.length, lockWatch: { since: oldest(group.map((i) => asks[i]!.since)) } });
        if (answer.transactions.length !== group.length || answer.lockWatch === undefined) {
          throw new LeaseholdError("BAD_RESPONSE", `transactions/start answered ${answer.transactions.length} transactions for ${group.length}${answer.lockWatch === undefined ? " and no lockWatch" : ""}`);
        }
        const lockWatch = answer.lockWatch;
        group.forEach((i, k) => {
          results[i] = { transaction: answer.transactions[k]!, immutableTimestamp: answer.immutableTimestamp, lease: answer.lease, lockWatch };
        });
      }),
    );
    return results;
  };
}

function oldest(sinces: readonly (LockWatchSince | null)[]): LockWatchSince | null {
  let out: LockWatchSince | null = null;
  for (const since of sinces) {
    if (since === null) return null;
    if (out === null) out = since;
    else if (out.logId !== since.logId) return null;
    else if (since.version < out.version) out = since;
  }
  return out;
}
