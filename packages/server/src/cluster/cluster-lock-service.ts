import {
  LeaseholdError,
  onAbort,
  requestValidators,
  shardOf,
  validateNamespace,
  type CallOptions,
  type ClusterResponse,
  type HealthResponse,
  type ImmutableTimestampResponse,
  type LockBatchResultListener,
  type LockCancelResponse,
  type LockResponse,
  type LockWatchesResponse,
  type LockWatchUpdate,
  type NamespaceLocksQuery,
  type NamespaceLocksResponse,
  type NamespacesQuery,
  type NamespacesResponse,
  type NamespaceSummary,
  type RefreshResponse,
  type RevokeResponse,
  type StartTransactionsResponse,
  type TimestampsResponse,
  type UnlockResponse,
  type TimestampLeaseMinResponse,
  type TimestampLeaseResponse,
  type WaitForLocksResponse,
} from "@leasehold/protocol";
import type { LockTableSnapshot, ServiceMetrics } from "../engine/engine-snapshots.js";
import type { EmbeddedLockService, RevokeContext } from "../service/embedded-lock-service.js";
import { runLockBatch, type LockBatchRun } from "../service/run-lock-batch.js";
import { WaitingLockHandle } from "../service/waiting-lock-handle.js";
import { notLeader, TAKING_OVER_RETRY_AFTER_MS, unavailable } from "./cluster-errors.js";
import type { ClusterRuntime } from "./cluster-runtime.js";
import type { Coordinator } from "./coordinator.js";
import { followAbort } from "./follow-abort.js";
import { protectionOf, type Protection } from "./protection.js";
import { ledElsewhere, shardLeadersOf, type ShardLeader } from "./shard-leaders.js";
import type { ShardTerm } from "./shard-term.js";

const COUNTERS = ["grantsTotal", "timeoutsTotal", "leaseLapsesTotal", "unlocksTotal", "abandonedTotal", "namespaces"] as const;
type Counters = Record<(typeof COUNTERS)[number], number>;

/** How many namespace → shard answers are cached before the cache starts over. */
const SHARD_CACHE_LIMIT = 65_536;

/**
 * The lock service of a cluster member: every operation goes to the term of its namespace's
 * shard that this server leads, or is answered `421 NOT_LEADER` (another server leads it) or
 * `503 UNAVAILABLE` with `retryAfterMs` (no leader right now, or this server is taking it over).
 * Everything else (validation, waits, leases) is the same {@link InMemoryLockService} a single
 * server runs, one per shard term.
 */
export class ClusterLockService implements EmbeddedLockService {
  /** Random per process: health and metrics name this process with it (leases carry per-term ids). */
  readonly leaderId = globalThis.crypto.randomUUID();
  private readonly shardCache = new Map<string, number>();
  private readonly retired: Counters = { grantsTotal: 0, timeoutsTotal: 0, leaseLapsesTotal: 0, unlocksTotal: 0, abandonedTotal: 0, namespaces: 0 };
  private closing: Promise<void> | null = null;

  constructor(
    private readonly runtime: ClusterRuntime,
    private readonly coordinator: Coordinator,
    private readonly info: { readonly serverId: string; readonly version: string },
  ) {
    runtime.onTermEnded = (term) => this.retire(term);
  }

  /** Fold an ended term's counters into the totals, so counters never go down. */
  retire(term: ShardTerm): void {
    const m = term.service.metrics();
    for (const key of COUNTERS) this.retired[key] += m[key];
  }

  async lock(namespace: string, request: unknown, options?: CallOptions): Promise<LockResponse> {
    return followAbort(this.beginLock(namespace, request), options?.signal);
  }

  /** `wait-for-locks` on the namespace's leader, held back like a lock during a takeover's lease-wait. */
  async waitForLocks(namespace: string, request: unknown, options?: CallOptions): Promise<WaitForLocksResponse> {
    return followAbort(this.beginWaitForLocks(namespace, request), options?.signal);
  }

  beginWaitForLocks(namespace: string, request: unknown): WaitForLocksResponse | WaitingLockHandle<WaitForLocksResponse> {
    const ns = this.checked(namespace);
    return this.route(ns).beginWaitForLocks(ns, request);
  }

  /**
   * `timestamp-leases`, served at once like `transactions/start`; during the lease-wait its
   * `minLeased` is capped as the immutable timestamp is (PROTOCOL.md "Leases across failover").
   */
  async acquireTimestampLease(namespace: string, request: unknown): Promise<TimestampLeaseResponse> {
    const ns = this.checked(namespace);
    const term = this.route(ns);
    const loading = term.prepare(ns);
    if (loading !== null) await loading;
    const answer = await term.held(() => term.service.acquireTimestampLease(ns, request));
    const capped = term.capImmutable(ns, answer.minLeased);
    return capped === answer.minLeased ? answer : { ...answer, minLeased: capped };
  }

  /** `timestamp-leases/min`, capped during the lease-wait as the immutable timestamp is. */
  async minLeasedTimestamp(namespace: string, request: unknown): Promise<TimestampLeaseMinResponse> {
    const ns = this.checked(namespace);
    const term = this.route(ns);
    const loading = term.prepare(ns);
    if (loading !== null) await loading;
    const answer = await term.service.minLeasedTimestamp(ns, request);
    return { minLeased: term.capImmutable(ns, answer.minLeased) };
  }

  beginLock(namespace: string, request: unknown): LockResponse | WaitingLockHandle {
    const ns = this.checked(namespace);
    return this.route(ns).beginLock(ns, request);
  }

  lockBatch(namespace: string, request: unknown, onResult: LockBatchResultListener, options?: CallOptions): Promise<void> {
    try {
      return this.beginLockBatch(namespace, request, onResult, options?.signal).done;
    } catch (err) {
      return Promise.reject(err instanceof Error ? err : new Error(String(err)));
    }
  }

  beginLockBatch(namespace: string, request: unknown, onResult: LockBatchResultListener, signal?: AbortSignal): LockBatchRun {
    const ns = this.checked(namespace);
    const term = this.route(ns);
    const { requests } = requestValidators["lock-batch"].parse(request);
    if (signal?.aborted === true) throw new LeaseholdError("CANCELLED", "the lock batch was abandoned before it ran");
    const run = runLockBatch((entry) => term.beginLock(ns, entry), requests, onResult, (err) => this.runtime.bug(err));
    if (signal !== undefined) {
      const off = onAbort(signal, () => run.abandon());
      void run.done.then(off, off);
    }
    return run;
  }

  async cancelLock(namespace: string, request: unknown): Promise<LockCancelResponse> {
    const ns = this.checked(namespace);
    const term = this.route(ns);
    const { requestId } = requestValidators["lock-cancel"].parse(request);
    if (term.cancelQueued(ns, requestId)) return { cancelled: true };
    return term.service.cancelLock(ns, request);
  }

  async unlock(namespace: string, request: unknown): Promise<UnlockResponse> {
    const ns = this.checked(namespace);
    return this.route(ns).service.unlock(ns, request);
  }

  async refresh(namespace: string, request: unknown): Promise<RefreshResponse> {
    const ns = this.checked(namespace);
    return this.route(ns).service.refresh(ns, request);
  }

  async timestamps(namespace: string, request: unknown): Promise<TimestampsResponse> {
    const ns = this.checked(namespace);
    const term = this.route(ns);
    const loading = term.prepare(ns);
    if (loading !== null) await loading;
    return term.service.timestamps(ns, request);
  }

  async startTransactions(namespace: string, request: unknown): Promise<StartTransactionsResponse> {
    const ns = this.checked(namespace);
    const term = this.route(ns);
    const loading = term.prepare(ns);
    if (loading !== null) await loading;
    const answer = await term.held(() => term.service.startTransactions(ns, request));
    const capped = term.capImmutable(ns, answer.immutableTimestamp);
    return capped === answer.immutableTimestamp ? answer : { ...answer, immutableTimestamp: capped };
  }

  async lockWatches(namespace: string, request: unknown): Promise<LockWatchesResponse> {
    const ns = this.checked(namespace);
    return this.route(ns).service.lockWatches(ns, request);
  }

  async lockEvents(namespace: string, request: unknown, options?: CallOptions): Promise<LockWatchUpdate> {
    const ns = this.checked(namespace);
    const term = this.route(ns);
    // An event may tell of a grant: it waits for the standby like the grant's own answer.
    return term.held(() => term.service.lockEvents(ns, request, options));
  }

  async immutableTimestamp(namespace: string, request: unknown): Promise<ImmutableTimestampResponse> {
    const ns = this.checked(namespace);
    const term = this.route(ns);
    const loading = term.prepare(ns);
    if (loading !== null) await loading;
    const answer = await term.service.immutableTimestamp(ns, request);
    return { immutableTimestamp: term.capImmutable(ns, answer.immutableTimestamp) };
  }

  async health(): Promise<HealthResponse> {
    this.checkOpen();
    return { status: "ok", leaderId: this.leaderId, version: this.info.version, serverId: this.info.serverId, cluster: this.protection() };
  }

  /**
   * This server's part of the cluster's protection (PROTOCOL.md "Cluster mode", Health): from its
   * own terms and the rows as it last read them. Standbys exist only with `--replicas 1` (the
   * runtime then has a promoter); with `--replicas 0` it is never protected.
   */
  protection(): Protection {
    const { runtime } = this;
    return protectionOf({
      serverId: this.info.serverId,
      incarnation: runtime.identity.incarnation,
      terms: runtime.terms,
      leases: runtime.leases,
      leasesFresh: runtime.leasesFresh,
      replicating: runtime.promoter !== null,
    });
  }

  /**
   * `GET /v1/cluster`: who leads each shard, as this server knows it, with the shard row's epoch
   * as last read (clients keep the view with the higher epoch), and its standby. With `lag`
   * (`?lag`: another member's status view asks it) the standbys of the shards led here carry
   * their replication lag; without it the answer stays the same between changes of leadership or
   * standby, so clients and scripts can compare views. Another server's leadership is
   * named only while this server's last read of the lease rows is younger than a leader lease: a
   * server cut off from PostgreSQL names no leader rather than one that may have been deposed.
   * Its own terms are named while their gates are open (they close within a lease of the last
   * renewal; a closed one waits for a renewal to reopen it). Before this server has reached PostgreSQL once it does not know the shard count:
   * `503 UNAVAILABLE` saying so (clients ask another server).
   */
  cluster(options: { readonly lag?: boolean | undefined } = {}): ClusterResponse {
    const lag = options.lag === true;
    const leaders = this.shardLeaders().map(({ shard, url, leaderId, epoch, standby }) => ({
      shard,
      leaderUrl: url,
      leaderId,
      epoch,
      standby:
        standby === null
          ? null
          : { serverId: standby.serverId, inSync: standby.inSync, ...(!lag || standby.lagEntries === undefined ? {} : { lagEntries: standby.lagEntries, lagMs: standby.lagMs ?? 0 }) },
    }));
    return { serverId: this.info.serverId, shards: leaders.length, leaders };
  }

  /** Who leads each shard as this server knows it (shard-leaders.ts `shardLeadersOf`); 503 before this server has joined. */
  shardLeaders(): ShardLeader[] {
    return shardLeadersOf(this.runtime, this.info.serverId, this.joinedShards());
  }

  metrics(): ServiceMetrics {
    const sum = { ...this.retired, heldLocks: 0, heldTokens: 0, waitingRequests: 0 };
    for (const term of this.runtime.terms) {
      if (term === null) continue;
      const m = term.service.metrics();
      for (const key of COUNTERS) sum[key] += m[key];
      sum.heldLocks += m.heldLocks;
      sum.heldTokens += m.heldTokens;
      sum.waitingRequests += m.waitingRequests;
    }
    return sum;
  }

  /**
   * Counts of the namespaces of the shards this server leads, a page at a time, in name order.
   * The terms are independent tables, so this merges their summaries: O(namespaces led), as the
   * single server's walk of its namespace map is.
   */
  inspectNamespaces(query: NamespacesQuery, visible: (namespace: string) => boolean = () => true): NamespacesResponse {
    this.checkOpen();
    const after = query.cursor;
    const chosen = this.namespaceSummaries()
      .filter((s) => (after === undefined || s.namespace > after) && visible(s.namespace))
      .sort((a, b) => (a.namespace < b.namespace ? -1 : a.namespace > b.namespace ? 1 : 0));
    const page = chosen.slice(0, query.limit);
    const last = page[page.length - 1];
    return chosen.length > query.limit && last !== undefined ? { namespaces: page, nextCursor: last.namespace } : { namespaces: page };
  }

  /** Counts of every namespace of the shards this server leads (metrics). */
  namespaceSummaries(): NamespaceSummary[] {
    const all: NamespaceSummary[] = [];
    for (const term of this.runtime.terms) if (term !== null) all.push(...term.service.namespaceSummaries());
    return all;
  }

  /** One page of a namespace's locks, from the term that leads it (else 421/503 like any operation). */
  inspectLocks(namespace: string, query: NamespaceLocksQuery): Promise<NamespaceLocksResponse> {
    try {
      const ns = this.checked(namespace);
      const term = this.route(ns);
      // A page lists grants: it waits for the standby like the grants' own answers.
      return term.held(() => term.service.inspectLocks(ns, query));
    } catch (err) {
      return Promise.reject(err instanceof Error ? err : new Error(String(err)));
    }
  }

  /** Revoke in the term that leads the namespace (else 421/503 like any operation). */
  async revoke(namespace: string, request: unknown, context?: RevokeContext): Promise<RevokeResponse> {
    const ns = this.checked(namespace);
    return this.route(ns).service.revoke(ns, request, context);
  }

  snapshot(namespace: string): LockTableSnapshot {
    const ns = this.checked(namespace);
    return this.route(ns).service.snapshot(ns);
  }

  /** Stop taking shards, hand led shards over (release + NOTIFY), answer waiters 503. Idempotent. */
  close(): Promise<void> {
    this.closing ??= this.runtime.stop().finally(() => this.coordinator.close());
    return this.closing;
  }

  /** The cluster's shard count, or the 503 of a server that has not joined yet. */
  private joinedShards(): number {
    const shards = this.runtime.shards;
    if (shards !== null) return shards;
    const down = this.runtime.coordinatorDown;
    const why = down === null ? "it is still connecting" : `it cannot reach the cluster's PostgreSQL (${down})`;
    throw unavailable(`this server has not joined the cluster yet: ${why}; it keeps retrying, retry shortly or ask another server`, this.runtime.retryAfterMs);
  }

  private checked(namespace: string): string {
    if (this.closing === null) return validateNamespace(namespace);
    const ns = validateNamespace(namespace);
    this.redirectClosing(ns);
    this.checkOpen();
    return ns;
  }

  /**
   * A stopping server answers 421 with the new leader's URL for a shard it knows another live
   * server holds (one it just handed over names its taker at once), so a client re-sends there
   * without a backoff; only while its view is fresh (anything else gets the shutting-down 503 of
   * {@link checkOpen}).
   */
  private redirectClosing(namespace: string): void {
    const shards = this.runtime.shards;
    if (shards === null || !this.runtime.leasesFresh) return;
    const shard = shardOf(namespace, shards);
    const other = ledElsewhere(this.runtime, this.info.serverId, shard);
    if (other !== null) throw notLeader(namespace, shard, other.url);
  }

  private checkOpen(): void {
    if (this.closing !== null) throw new LeaseholdError("UNAVAILABLE", "the lock server is shutting down");
  }

  /** This server's term for the namespace's shard, or the 421/503 that sends the client elsewhere. */
  private route(namespace: string): ShardTerm {
    const shards = this.joinedShards();
    let shard = this.shardCache.get(namespace);
    if (shard === undefined) {
      if (this.shardCache.size >= SHARD_CACHE_LIMIT) this.shardCache.clear();
      shard = shardOf(namespace, shards);
      this.shardCache.set(namespace, shard);
    }
    const term = this.runtime.terms[shard];
    if (term !== null && term !== undefined) {
      const down = this.runtime.coordinatorDown;
      // Its gate closed by time and PostgreSQL is out of reach: say why (the term waits for a renewal).
      if (term.closedByTime && down !== null) {
        throw unavailable(`shard ${shard} (namespace ${JSON.stringify(namespace)}) is not served right now: this server cannot reach the cluster's PostgreSQL (${down}), so it cannot confirm its leadership; retry shortly`, this.runtime.retryAfterMs, { shard });
      }
      return term;
    }
    // Another server leads it as last read: 421, naming it only while that read is fresh.
    const other = ledElsewhere(this.runtime, this.info.serverId, shard);
    if (other !== null) throw notLeader(namespace, shard, this.runtime.leasesFresh ? other.url : null);
    const row = this.runtime.leases[shard];
    const down = this.runtime.coordinatorDown;
    // The live row names this very process without a term: a hand-over to it (adopted a
    // statement away) or from it (the next read of the row names the new holder): short either way.
    const changing = down === null && row !== undefined && this.runtime.identity.isOwn(row) && !row.expired;
    const why = down === null ? (changing ? "it is changing hands at this server" : "a server is taking it over") : `this server cannot reach the cluster's PostgreSQL (${down}), so it cannot lead or route it`;
    throw unavailable(`shard ${shard} (namespace ${JSON.stringify(namespace)}) has no leader right now: ${why}; retry shortly`, changing ? TAKING_OVER_RETRY_AFTER_MS : this.runtime.retryAfterMs, { shard });
  }
}
