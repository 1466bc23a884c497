import {
  LeaseholdError,
  LIMITS,
  type Lease,
  type LockService,
  type RefreshResponse,
  type StartTransactionsResponse,
  type TimestampsResponse,
} from "@leasehold/protocol";
import type { BatchFunction } from "./autobatcher.js";
import { chunks } from "./chunks.js";

/** Group consecutive counts so that each group sums to at most `max` (every count is ≤ `max`). */
function packCounts(counts: readonly number[], max: number): number[][] {
  const groups: number[][] = [];
  let current: number[] = [];
  let sum = 0;
  counts.forEach((count, i) => {
    if (sum + count > max && current.length > 0) {
      groups.push(current);
      current = [];
      sum = 0;
    }
    current.push(i);
    sum += count;
  });
  if (current.length > 0) groups.push(current);
  return groups;
}

function shortAnswer(what: string, asked: number, got: number): LeaseholdError {
  return new LeaseholdError("BAD_RESPONSE", `${what}: asked for ${asked}, the service answered ${got}`, { asked, got });
}

/** Timestamp requests (counts) served by `timestamps` calls of at most 10,000 each, cut back into ranges. */
export function timestampsBatch(service: LockService, namespace: string): BatchFunction<number, TimestampsResponse> {
  return async (counts) => {
    const results: TimestampsResponse[] = new Array<TimestampsResponse>(counts.length);
    await Promise.all(
      packCounts(counts, LIMITS.maxTimestampCount).map(async (group) => {
        const total = group.reduce((sum, i) => sum + (counts[i] ?? 0), 0);
        const answer = await service.timestamps(namespace, { count: total });
        if (answer.count !== total) throw shortAnswer("timestamps", total, answer.count);
        let next = answer.start;
        for (const i of group) {
          const count = counts[i] ?? 0;
          results[i] = { start: next, count };
          next += count;
        }
      }),
    );
    return results;
  };
}

/** Transaction-start requests (counts) served by `transactions/start` calls of at most 1,000 each. */
export function startTransactionsBatch(
  service: LockService,
  namespace: string,
): BatchFunction<number, StartTransactionsResponse> {
  return async (counts) => {
    const results: StartTransactionsResponse[] = new Array<StartTransactionsResponse>(counts.length);
    await Promise.all(
      packCounts(counts, LIMITS.maxTransactionCount).map(async (group) => {
        const total = group.reduce((sum, i) => sum + (counts[i] ?? 0), 0);
        const answer = await service.startTransactions(namespace, { count: total });
        if (answer.transactions.length !== total) throw shortAnswer("transactions/start", total, answer.transactions.length);
        let next = 0;
        for (const i of group) {
          const count = counts[i] ?? 0;
          const transactions = answer.transactions.slice(next, next + count);
          next += count;
          results[i] = { immutableTimestamp: answer.immutableTimestamp, transactions, lease: answer.lease };
        }
      }),
    );
    return results;
  };
}

/** One caller's share of a batched refresh. */
export interface RefreshAsk {
  /** The tokens to renew. */
  readonly tokens: readonly string[];
  /**
   * Checked for each token when the call is actually sent, which may be long after the ask was
   * queued (another refresh call was in flight): a token it rejects is left out. The refresher
   * passes "still tracked", so a token given to `unlock`/`tryUnlock` while its ask waited is never
   * refreshed again. Default: every token is sent (an explicit `refresh()`).
   */
  readonly stillWanted?: ((token: string) => boolean) | undefined;
}

/**
 * Refresh requests served by one `refresh` per 10,000 distinct tokens. Each caller gets back the
 * tokens of its own that were refreshed, and the shortest lease any call answered (the
 * conservative promise when the calls were split).
 */
export function refreshBatch(
  service: LockService,
  namespace: string,
  onCall: () => void = () => undefined,
): BatchFunction<RefreshAsk, RefreshResponse> {
  return async (requests) => {
    const wanted = new Set<string>();
    for (const { tokens, stillWanted } of requests) {
      for (const token of tokens) if (stillWanted === undefined || stillWanted(token)) wanted.add(token);
    }
    const distinct = [...wanted];
    const refreshed = new Set<string>();
    let lease: Lease | undefined;
    await Promise.all(
      chunks(distinct, LIMITS.maxTokensPerRequest).map(async (tokens) => {
        onCall();
        const answer = await service.refresh(namespace, { tokens });
        for (const token of answer.refreshed) refreshed.add(token);
        if (lease === undefined || answer.lease.validForMs < lease.validForMs) lease = answer.lease;
      }),
    );
    const finalLease: Lease = lease ?? { leaderId: "", validForMs: 0 };
    return requests.map(({ tokens }) => ({ refreshed: tokens.filter((t) => refreshed.has(t)), lease: finalLease }));
  };
}
