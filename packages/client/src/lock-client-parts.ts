import type { LockService, StartTransactionsResponse, TimestampsResponse } from "@leasehold/protocol";
import { AsyncUnlocker } from "./async-unlocker.js";
import { Autobatcher } from "./autobatcher.js";
import { startTransactionsBatch, timestampsBatch } from "./batch-functions.js";
import { clientRefresher, type ClientRefresher, type LeaderWatch } from "./client-refresher.js";
import type { ClientStats } from "./client-stats.js";
import { createDefaultLogger } from "./default-logger.js";
import { LockBatcher } from "./lock-batcher.js";
import type { LockClientOptions } from "./lock-client-options.js";
import { VoidTokens } from "./void-tokens.js";
import { watchedStartBatch, type WatchedStart, type WatchedStartAsk } from "./watched-start-batch.js";

/** What {@link lockClientParts} needs; `LockClient` supplies every field. */
export interface LockClientPartsOptions {
  /** The service every call goes to. */
  readonly service: LockService;
  /** The client's namespace, already validated. */
  readonly namespace: string;
  /** The client's options; `logger` and `lockBatching` are read here (defaults: see `LockClientOptions`), the refresher's in {@link clientRefresher}. */
  readonly options: LockClientOptions;
  /** True for an embedded service: lock batching is then off unless asked for, and the batcher starts entries at once. */
  readonly inProcess: boolean;
  /** The transport's leader terms, when it knows them (HTTP); none for an embedded service. */
  readonly leaders: LeaderWatch | undefined;
  /** The client's counters for `stats()`. */
  readonly stats: ClientStats;
  /** The client's monotonic clock. */
  readonly now: () => number;
  /** Where the lock batcher gives back a grant its caller no longer wants (`LockClient.tryUnlock`). */
  readonly giveBack: (tokens: readonly string[]) => void;
}

/** The parts a `LockClient` is made of: its batchers, refresher and unlocker. */
export interface LockClientParts extends ClientRefresher {
  /** Coalesces concurrent `freshTimestamps` calls. */
  readonly timestamps: Autobatcher<number, TimestampsResponse>;
  /** Coalesces concurrent `startTransactions` calls. */
  readonly transactions: Autobatcher<number, StartTransactionsResponse>;
  /** Coalesces concurrent `startWatchedTransaction` calls. */
  readonly watchedStarts: Autobatcher<WatchedStartAsk, WatchedStart>;
  /** Where `lock` requests go: the lock batcher when `lockBatching` is on, else the service. */
  readonly locks: Pick<LockService, "lock">;
  /** Sends `unlock` and `tryUnlock` releases, one call at a time. */
  readonly unlocker: AsyncUnlocker;
}

/**
 * Build and wire the parts of a `LockClient`: the autobatchers of timestamps and transaction
 * starts, the refresher ({@link clientRefresher}), where locks go, and the unlocker, whose calls
 * leave out the tokens of ended leader terms and whose released tokens the refresher forgets.
 */
export function lockClientParts({ service, namespace, options, inProcess, leaders, stats, now, giveBack }: LockClientPartsOptions): LockClientParts {
  const logger = options.logger ?? createDefaultLogger();
  // Tokens dropped as `leader-changed` are void: unlocking them would be a wasted call.
  const voided = new VoidTokens();
  const { refresh, refresher, refreshIfVoid, stopWatchingLeaders } = clientRefresher({ service, namespace, options, logger, stats, now, voided, leaders });
  return {
    timestamps: new Autobatcher(timestampsBatch(service, namespace)),
    transactions: new Autobatcher(startTransactionsBatch(service, namespace)),
    watchedStarts: new Autobatcher(watchedStartBatch(service, namespace)),
    refresh,
    refresher,
    refreshIfVoid,
    stopWatchingLeaders,
    locks:
      (options.lockBatching ?? !inProcess) && service.lockBatch !== undefined
        ? new LockBatcher({ service, namespace, release: giveBack, now, inProcess })
        : service,
    unlocker: new AsyncUnlocker({
      // Where unlocks go: the service, less the tokens of ended leader terms.
      service: { unlock: (ns, body, callOptions) => voided.unlock(service, ns, body, callOptions) },
      logger,
      stats,
      forget: (_namespace, tokens) => refresher.forget(tokens),
    }),
  };
}
