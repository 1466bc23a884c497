import {
  LeaseholdError,
  type NamespaceLocksQuery, type NamespaceLocksResponse, type NamespaceSummary, type RevokeRequest, type RevokeResponse,
} from "@leasehold/protocol";
import type { LockTableSnapshot, ServiceMetrics } from "./engine-snapshots.js";
import { DescriptorsPageBuilder, emptyPage, fingerprintSteps, inspectNamespace, pageOfNamespaces, summarizeNamespace } from "./inspect-namespace.js";
import { DONE } from "./lock-request-state.js";
import { findRevokeTargets, releaseRevoked } from "./revoke-holders.js";
import { snapshotNamespace } from "./snapshot-namespace.js";
import { applyReplicationEntry, type ReplicaHost } from "./apply-entry.js";
import { emptyImage, exportNamespace } from "./export-namespace.js";
import { restoreNamespaceImage } from "./restore-namespace.js";
import { REPLICA_GATE, startServing } from "./promote-replica.js";
import { CARRIED_WATCH_GAP } from "./carried-watch.js";
import { LockWatchLog } from "./lock-watch-log.js";
import type { NamespaceImage, PromoteOptions, PromoteSummary, ReplicationEntry, ReplicationSink } from "./replication-entries.js";
import { LockEngineCore } from "./lock-engine-core.js";
import { TIMEOUT } from "./timeout-answers.js";
import type { InspectionJob, LockAttempt, LockEngineOptions } from "./lock-engine-options.js";

export type { InspectionJob, LockAttempt, LockEngineOptions };

/**
 * The lock table: pure and synchronous, with an injected clock and no timers or I/O of its own.
 * Inputs must already be valid (the service validates); the engine trusts them for speed, and keeps
 * references to the request objects it is given, so callers must not mutate them afterwards.
 * Time passes through {@link advance} (the host calls it when {@link nextDeadline} is due); every
 * operation also catches up first, so answers never depend on when a timer happened to fire.
 */
export class LockEngine extends LockEngineCore {
  /** The engine as a replica's entries and images see it (see {@link replicaHost}), made on first use. */
  private host: ReplicaHost | undefined;

  /**
   * Stop: every waiting request settles with `error` (through `onSettled`), and every later call
   * throws `UNAVAILABLE`. Idempotent.
   */
  close(error: LeaseholdError = new LeaseholdError("UNAVAILABLE", "the lock server is shutting down")): void {
    if (this.closed) return;
    this.closed = true;
    this.table.deadlines.clear();
    for (const ns of this.namespaces.values()) {
      for (const req of ns.waiting) {
        req.status = DONE;
        const pending = req.pending;
        req.pending = null;
        if (pending !== null) this.onSettled(pending, error);
      }
      ns.waiting.clear();
    }
  }

  /** Counters and gauges. */
  metrics(): ServiceMetrics {
    let waiting = 0;
    for (const ns of this.namespaces.values()) waiting += ns.waiting.size;
    return {
      namespaces: this.namespaces.size,
      heldLocks: this.table.heldLocks,
      heldTokens: this.table.leases.size,
      waitingRequests: this.closed ? 0 : waiting,
      grantsTotal: this.table.grantsTotal,
      timeoutsTotal: this.tally.timeouts,
      leaseLapsesTotal: this.tally.lapses,
      unlocksTotal: this.unlocksTotal,
      abandonedTotal: this.abandonedTotal,
      revokedTotal: this.revokedTotal,
    };
  }

  /**
   * Counts of up to `limit` namespaces with names after `cursor`, ascending, among those
   * `visible` accepts (default: all). One walk of the namespaces through a bounded heap.
   */
  inspectNamespaces(cursor: string | undefined, limit: number, visible: (namespace: string) => boolean = () => true): { namespaces: NamespaceSummary[]; more: boolean } {
    return pageOfNamespaces(this.namespaces.values(), cursor, limit, visible, this.readNow());
  }

  /** Counts of every namespace (for metrics): O(namespaces), no walk of any lock. */
  namespaceSummaries(): NamespaceSummary[] {
    const now = this.readNow();
    return [...this.namespaces.values()].map((ns) => summarizeNamespace(ns, now));
  }

  /** One page of a namespace's locks (docs/protocol.md "Inspection and revoke"); never creates the namespace. */
  inspect(namespace: string, query: NamespaceLocksQuery): NamespaceLocksResponse {
    const now = this.readNow();
    const ns = this.namespaces.get(namespace);
    return ns === undefined ? emptyPage(namespace, query) : inspectNamespace(ns, query, now);
  }

  /**
   * {@link inspect} in steps: `step(budget)` walks at most about `budget` entries and says whether
   * the page is ready; `finish()` answers it. Between steps the table may change (the host runs
   * other requests); the page then shows what is still true when it finishes. Only the
   * `descriptors` view walks the whole namespace; the others are ready at once.
   */
  inspectInSteps(namespace: string, query: NamespaceLocksQuery): InspectionJob {
    this.readNow();
    const ns = this.namespaces.get(namespace);
    if (ns === undefined || query.view !== "descriptors") {
      return { step: () => true, finish: () => this.inspect(namespace, query) };
    }
    const builder = new DescriptorsPageBuilder(ns, query);
    return { step: (budget) => builder.step(budget), finish: () => builder.finish(this.readNow()) };
  }

  /**
   * Compute, in steps, the fingerprint of every live token of a namespace that has none yet, so a
   * following revoke by fingerprint finds its targets among cached fingerprints instead of hashing
   * a whole large namespace in one go (the host runs the steps with its event loop free between
   * them). Tokens granted meanwhile are hashed by the revoke itself, if it still misses one.
   */
  fingerprintInSteps(namespace: string): { step(budget: number): boolean } {
    return fingerprintSteps(this.namespaces.get(namespace));
  }

  /**
   * Release the holders a revoke names: waiting all-or-none requests holding a named descriptor
   * first (they settle `timeout` through `onSettled`), then the named tokens, whole
   * ({@link releaseRevoked}). Waiters are granted at once, as on unlock.
   */
  revoke(namespace: string, request: RevokeRequest): RevokeResponse {
    const now = this.catchUp();
    const ns = this.namespaces.get(namespace);
    if (ns === undefined) return { revoked: [], notFound: [...(request.fingerprints ?? request.descriptors ?? [])] };
    const targets = findRevokeTargets(ns, request);
    const revoked = releaseRevoked(this.table, targets, now, (pending) => this.onSettled(pending, TIMEOUT));
    this.revokedTotal += revoked.length;
    return { revoked, notFound: targets.notFound };
  }

  /**
   * What the namespace's immutable timestamp is now, without taking a number: the smallest start
   * timestamp held, or the next number the counter would hand out (every later transaction starts
   * at or above it). `undefined` for a namespace never used. A cluster leader records it so that a
   * later leader never answers more (PROTOCOL.md "Leases across failover").
   */
  immutableFloor(namespace: string): number | undefined {
    const ns = this.namespaces.get(namespace);
    return ns === undefined ? undefined : (ns.minImmutable() ?? ns.nextValue);
  }

  /**
   * The smallest timestamp held under any lease name of the namespace, without taking a number;
   * `undefined` when none is held. A cluster leader records it with the immutable timestamp.
   */
  leaseFloor(namespace: string): number | undefined {
    return this.namespaces.get(namespace)?.minLeasedAny();
  }

  /** A token-free picture of one namespace (an empty one, without creating it, if never used). */
  snapshot(namespace: string): LockTableSnapshot {
    const ns = this.namespaces.get(namespace);
    if (ns === undefined) {
      return { descriptors: [], heldTokens: 0, waitingRequests: 0, immutableLocks: [], nextTimestamp: this.reserver.floor(namespace) + 1 };
    }
    return snapshotNamespace(ns);
  }

  /** True while the table is a passive replica (see {@link promote}). */
  get isReplica(): boolean {
    return this.gate === REPLICA_GATE;
  }

  /**
   * Where every change of the table goes, as replication entries, synchronously and in order
   * (`null`: nowhere, the default, which allocates nothing). The sink must not call back into the
   * engine. A standby joins by {@link exportNamespace} and the entries from that moment on.
   */
  setReplicationSink(sink: ReplicationSink | null): void {
    this.table.sink = sink;
  }

  /** Names of the namespaces the table holds (a shard's are exported one by one), in creation order. */
  namespaceNames(): string[] {
    return [...this.namespaces.keys()];
  }

  /**
   * The namespace's whole table as plain JSON (see {@link NamespaceImage}); an empty image for a
   * namespace never used. A serving table catches up first; a replica, or a table behind a closed
   * gate (a hand-over exports its final state after closing it), is read as it stands.
   */
  exportNamespace(namespace: string): NamespaceImage {
    return this.imageAt(namespace, this.exportTime());
  }

  /**
   * Every namespace's image (see {@link exportNamespace}) at one moment, as a standby's snapshot
   * needs: a serving table catches up once, first, so whatever that reaps (a lapse, a waiter's
   * deadline) reaches the replication sink before any image is read; then each namespace is read
   * at that same moment, appending nothing. The images thus hold exactly the changes the sink was
   * told of so far: a log position taken right after them has every entry they reflect before it
   * and none after (exporting namespace by namespace, a catch-up between two of them could reap a
   * lease of one already exported, into the log before the position but not into its image).
   */
  exportNamespaces(): Record<string, NamespaceImage> {
    const now = this.exportTime();
    return Object.fromEntries([...this.namespaces.keys()].map((name) => [name, this.imageAt(name, now)]));
  }

  /** The moment an export reads: a serving table catches up first; a replica, or one behind a closed gate, stands as it is. */
  private exportTime(): number {
    if (this.closed) throw new LeaseholdError("UNAVAILABLE", "the lock server is shutting down");
    return this.gate === null || (this.gate !== REPLICA_GATE && this.gate.isOpen(this.clock())) ? this.catchUp() : this.clock();
  }

  private imageAt(namespace: string, now: number): NamespaceImage {
    const ns = this.namespaces.get(namespace);
    return ns === undefined ? emptyImage(namespace, this.reserver.floor(namespace) + 1, this.waitSerial) : exportNamespace(ns, now, this.waitSerial);
  }

  /**
   * Install an image taken by {@link exportNamespace} of another table, on a replica that does not
   * hold the namespace yet. A bad image, or a namespace already held, throws `INVALID_ARGUMENT`
   * naming the field and changes nothing.
   */
  restoreNamespace(namespace: string, image: NamespaceImage): void {
    restoreNamespaceImage(this.replicaHost(), namespace, image, this.clock());
  }

  /**
   * Install one entry of the leader's change feed, as decided there (a replica never grants on its
   * own). An entry that is malformed or does not fit (release of an unknown token, a grant of a
   * live token, a waiter that does not exist) throws `INVALID_ARGUMENT` and changes nothing.
   * Applying an entry twice: a `grant`, `release` or `waiter-ended` is refused the second time (a
   * misfit, nothing changes); a `waiting`, `limit` or `counter` entry states a whole value, so
   * applying it again changes nothing. The feed must therefore be applied once, in order.
   */
  applyEntry(namespace: string, entry: ReplicationEntry): void {
    applyReplicationEntry(this.replicaHost(), namespace, entry, this.clock());
  }

  /**
   * Make a replica serve: every lease restarts from now (at a full `leaseMs`, or the longer
   * `carriedLeaseMs` given), tokens keep working as they are (the engine must have the leader's
   * `leaderId`), and each carried waiter keeps its place for `claimWindowMs` for a re-sent request
   * with its `requestId`; then unclaimed ones are dropped and what was granted to them released. A
   * namespace's lock-event log whose leader's log the replica carried (a watch was registered)
   * continues it: same log id and prefixes, whole from {@link CARRIED_WATCH_GAP} above the version
   * carried, so every follower gets a snapshot newer than what it saw. Any other log starts anew
   * under a new log id (the replica knows nothing of it: no follower may take a run of events as
   * complete across the change).
   */
  promote(options: PromoteOptions = {}): PromoteSummary {
    this.replicaHost();
    const now = this.clock();
    const { summary, claims } = startServing(this.table, this.namespaces.values(), now, options);
    this.claims = claims;
    this.gate = this.servingGate;
    this.logId = `${this.leaderId}.${globalThis.crypto.randomUUID()}`;
    for (const ns of this.namespaces.values()) {
      const carried = ns.carriedWatch;
      if (carried === null) continue;
      ns.carriedWatch = null;
      ns.watchLog = LockWatchLog.resumed(carried.logId, carried.version + CARRIED_WATCH_GAP, carried.prefixes);
    }
    return summary;
  }

  /**
   * Count the claim window of the carried waiters (see {@link promote}) from now rather than from
   * the promotion: a host whose gate stayed shut after promoting (a cluster term loading its carried
   * namespaces' timestamp bounds) calls it as the gate opens, since every re-sent request was
   * refused until then and must still find its place. Nothing when no window is open.
   */
  restartClaimWindow(): void {
    if (this.claims === null) return;
    this.claims = { ...this.claims, until: Math.ceil(this.clock() + this.claims.windowMs) };
  }

  /**
   * Move `namespace`'s counter up to `next`, never down (nothing when the table does not hold the
   * namespace). A table that carried another's namespaces (a promoted replica) resumes its counters
   * above a bound loaded afterwards: numbers between its copied counter and that bound were never
   * handed out, but may not be handed out either (the bound is the promise).
   */
  raiseCounter(namespace: string, next: number): void {
    this.namespaces.get(namespace)?.raiseCounter(next);
  }

  /** The time for a call that only reads: a serving table catches up first; a replica is read as it stands. */
  private readNow(): number {
    if (this.gate !== REPLICA_GATE || this.closed) return this.catchUp();
    return this.clock();
  }

  /** The engine as entries and images see it; throws unless the table is an open replica. */
  private replicaHost(): ReplicaHost {
    if (this.closed) throw new LeaseholdError("UNAVAILABLE", "the lock server is shutting down");
    if (this.gate !== REPLICA_GATE) throw new LeaseholdError("INVALID_ARGUMENT", "this lock table is not a replica: only a replica (option replica) restores images, applies entries or is promoted");
    // Made once: a replica applies an entry per grant and per release.
    return (this.host ??= {
      table: this.table,
      existing: (name) => this.namespaces.get(name),
      create: (name) => this.namespace(name),
      noteSerial: (serial) => {
        if (serial > this.waitSerial) this.waitSerial = serial;
      },
    });
  }
}
