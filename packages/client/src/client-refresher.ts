import type { Lease, LockService, RefreshResponse } from "@leasehold/protocol";
import { Autobatcher } from "./autobatcher.js";
import { refreshBatch, type RefreshAsk } from "./batch-functions.js";
import { clientChannels, clientMessages } from "./client-diagnostics.js";
import type { ClientStats } from "./client-stats.js";
import type { LockClientOptions } from "./lock-client-options.js";
import type { Logger } from "./logger.js";
import { observeRefresh } from "./observe-refresh.js";
import { Refresher } from "./refresher.js";
import type { VoidTokens } from "./void-tokens.js";

/** What a transport that knows leader terms offers (the HTTP one: see `HttpLockService.onVoidLeader`). */
export interface LeaderWatch {
  /** Call `listener` with each `leaderId` whose term ends from now on; returns the unsubscribe function. */
  onVoidLeader(listener: (leaderId: string) => void): () => void;
  /** True once `leaderId`'s term is known to have ended. */
  isVoidLeader(leaderId: string): boolean;
}

/** What {@link clientRefresher} needs; `LockClient` supplies every field. */
export interface ClientRefresherOptions {
  /** Where refresh calls go. */
  readonly service: LockService;
  /** The client's namespace. */
  readonly namespace: string;
  /** The client's options; `maxTenureMs`, `refreshIntervalMs` and `refreshTickMs` are read here (defaults: see `LockClientOptions`). */
  readonly options: LockClientOptions;
  /** Receives failed refreshes and lost locks, as counts. */
  readonly logger: Logger;
  /** Counts refresh calls and lost locks for `stats()`. */
  readonly stats: ClientStats;
  /** The client's monotonic clock. */
  readonly now: () => number;
  /** Where the tokens of an ended leader term go, so that no unlock carries them. */
  readonly voided: VoidTokens;
  /** The transport's leader terms, when it knows them (HTTP); none for an embedded service. */
  readonly leaders: LeaderWatch | undefined;
}

/** What {@link clientRefresher} builds. */
export interface ClientRefresher {
  /** The client's batched refresh: the refresher's, `refresh()`'s and a long-waited grant's (concurrent calls share one). */
  readonly refresh: Autobatcher<RefreshAsk, RefreshResponse>;
  /** Keeps the client's tokens alive and reports the lost ones. */
  readonly refresher: Refresher;
  /** A grant or start answered under a term already known to have ended is refreshed at once (the answer decides). */
  readonly refreshIfVoid: (lease: Lease) => void;
  /** Stops listening to the transport's ended leader terms (at `close()`). */
  readonly stopWatchingLeaders: () => void;
}

/**
 * A `LockClient`'s refresher, wired: its refreshes go through one batched, observed `refresh`; a
 * lost token is published on the diagnostics channel and, when its leader term ended, remembered
 * as void; and a leader term the transport sees end has its tokens refreshed at once, as have new
 * tokens whose lease names a term already known to have ended (`refreshIfVoid`).
 */
export function clientRefresher({ service, namespace: ns, options, logger, stats, now, voided, leaders }: ClientRefresherOptions): ClientRefresher {
  const refresh = new Autobatcher(observeRefresh(ns, refreshBatch(service, ns, () => stats.refreshCalls++), now));
  const refresher = new Refresher({
    refresh: (tokens, stillWanted) => refresh.submit({ tokens, stillWanted }),
    logger,
    stats,
    now,
    maxTenureMs: options.maxTenureMs ?? 15 * 60_000,
    refreshIntervalMs: options.refreshIntervalMs,
    tickMs: options.refreshTickMs ?? 100,
  });
  // Lost locks are rare: one subscription per client, publishing only when someone listens; a
  // token of an ended leader term is remembered so that no unlock ever carries it.
  refresher.lost.subscribe(({ token, reason }) => {
    if (clientChannels.lockLost.hasSubscribers) clientChannels.lockLost.publish(clientMessages.lockLost(ns, token, reason));
    if (reason !== "leader-changed") return;
    voided.add(token);
  });
  // A cluster transport says when a shard's leader changed: its tokens are refreshed at once,
  // not at their next renewal, and the answer says whether they are lost (withLock's signal
  // hears it then).
  const stopWatchingLeaders = leaders?.onVoidLeader((leaderId) => refresher.refreshLeaderSoon(leaderId)) ?? (() => undefined);
  const refreshIfVoid = (lease: Lease): void => {
    if (leaders?.isVoidLeader(lease.leaderId)) refresher.refreshLeaderSoon(lease.leaderId);
  };
  return { refresh, refresher, refreshIfVoid, stopWatchingLeaders };
}
