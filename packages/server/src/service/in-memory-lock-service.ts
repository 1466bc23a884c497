import {
  LeaseholdError, validateNamespace, requestValidators,
  type NamespaceLocksQuery, type NamespaceLocksResponse, type NamespacesQuery, type NamespacesResponse, type NamespaceSummary, type RevokeResponse,
} from "@leasehold/protocol";
import type { NamespaceImage, PromoteOptions, PromoteSummary, ReplicationEntry, ReplicationSink } from "../engine/replication-entries.js";
import type { EmbeddedLockService, LockTableSnapshot, RevokeContext, ServiceMetrics } from "./embedded-lock-service.js";
import { logRevoke } from "./log-admin-events.js";
import type { LockEngine } from "../engine/lock-engine.js";
import { LockServiceCore } from "./lock-service-core.js";

/**
 * Entries an inspection walks between two turns of the event loop: about 2 ms of work on the
 * 2-core development machine, so a page of a million-lock namespace delays a lock request by
 * that much at most, not by the whole walk.
 */
const INSPECTION_SLICE = 20_000;

/**
 * The embedded lock service: validates every request (it is the one place that does), drives a
 * {@link LockEngine} with real timers, and turns waits into promises that follow AbortSignals.
 */
export class InMemoryLockService extends LockServiceCore implements EmbeddedLockService {
  /** Current counters and gauges. */
  metrics(): ServiceMetrics {
    return this.engine.metrics();
  }

  /** Counts of namespaces, a page at a time (see {@link EmbeddedLockService.inspectNamespaces}). */
  inspectNamespaces(query: NamespacesQuery, visible?: (namespace: string) => boolean): NamespacesResponse {
    this.checkOpen();
    const { namespaces, more } = this.engine.inspectNamespaces(query.cursor, query.limit, visible);
    const last = namespaces[namespaces.length - 1];
    return more && last !== undefined ? { namespaces, nextCursor: last.namespace } : { namespaces };
  }

  /** Counts of every namespace (metrics). */
  namespaceSummaries(): NamespaceSummary[] {
    return this.closing === null ? this.engine.namespaceSummaries() : [];
  }

  /**
   * One page of a namespace's locks; rejects `INVALID_ARGUMENT` for a bad namespace. The walk of a
   * large namespace is cut into slices of {@link INSPECTION_SLICE} entries with the event loop
   * free in between, so lock requests never wait behind a whole walk (ADR 0006).
   */
  async inspectLocks(namespace: string, query: NamespaceLocksQuery): Promise<NamespaceLocksResponse> {
    this.checkOpen();
    const job = this.engine.inspectInSteps(validateNamespace(namespace), query);
    while (!job.step(INSPECTION_SLICE)) {
      await new Promise<void>((resolve) => setImmediate(resolve));
      this.checkOpen();
    }
    return job.finish();
  }

  /**
   * Validate a revoke, release what it names, log it (see {@link EmbeddedLockService.revoke}). A
   * revoke by fingerprint first fingerprints the namespace's tokens in slices, with the event loop
   * free in between, unless every asked fingerprint is already known; the release itself is one
   * synchronous step.
   */
  async revoke(namespace: string, request: unknown, context: RevokeContext = {}): Promise<RevokeResponse> {
    this.checkOpen();
    const ns = validateNamespace(namespace);
    const body = requestValidators.revoke.parse(request);
    if (body.fingerprints !== undefined) {
      const job = this.engine.fingerprintInSteps(ns);
      while (!job.step(INSPECTION_SLICE / 4)) {
        await new Promise<void>((resolve) => setImmediate(resolve));
        this.checkOpen();
      }
    }
    const answer = this.engine.revoke(ns, body);
    this.timer.arm(this.engine.nextDeadline());
    logRevoke(this.logger, ns, body, answer, context);
    this.activity.revoked(ns, body.reason, answer);
    return answer;
  }

  /** A token-free picture of one namespace; throws `INVALID_ARGUMENT` for a bad namespace. */
  snapshot(namespace: string): LockTableSnapshot {
    return this.engine.snapshot(validateNamespace(namespace));
  }

  /** The namespace's immutable timestamp without taking a number (see `LockEngine.immutableFloor`). */
  immutableFloor(namespace: string): number | undefined {
    return this.engine.immutableFloor(namespace);
  }

  /** Where every change of the table goes as replication entries (`null`: nowhere); see `LockEngine.setReplicationSink`. */
  setReplicationSink(sink: ReplicationSink | null): void {
    this.engine.setReplicationSink(sink);
  }

  /** True while the table is a passive replica (option `replica`, until {@link promote}). */
  get isReplica(): boolean {
    return this.engine.isReplica;
  }

  /** Names of the namespaces the table holds (see `LockEngine.namespaceNames`). */
  namespaceNames(): string[] {
    return this.engine.namespaceNames();
  }

  /** The namespace's whole table as JSON (see `LockEngine.exportNamespace`). */
  exportNamespace(namespace: string): NamespaceImage {
    return this.engine.exportNamespace(namespace);
  }

  /** Every namespace's image at one moment, for a standby's snapshot (see `LockEngine.exportNamespaces`). */
  exportNamespaces(): Record<string, NamespaceImage> {
    return this.engine.exportNamespaces();
  }

  /** Install an exported image on a replica (see `LockEngine.restoreNamespace`). */
  restoreNamespace(namespace: string, image: NamespaceImage): void {
    this.engine.restoreNamespace(namespace, image);
  }

  /** Install one entry of the leader's change feed on a replica (see `LockEngine.applyEntry`). */
  applyEntry(namespace: string, entry: ReplicationEntry): void {
    this.engine.applyEntry(namespace, entry);
  }

  /** Move a namespace's counter up to `next`, never down (see `LockEngine.raiseCounter`). */
  raiseCounter(namespace: string, next: number): void {
    this.engine.raiseCounter(namespace, next);
  }

  /** Count a promoted table's claim window from now (see `LockEngine.restartClaimWindow`): its gate opens only now. */
  restartClaimWindow(): void {
    this.engine.restartClaimWindow();
    this.timer.arm(this.engine.nextDeadline());
  }

  /** Make a replica serve (see `LockEngine.promote`); its timers start now. */
  promote(options?: PromoteOptions): PromoteSummary {
    this.checkOpen();
    const summary = this.engine.promote(options);
    this.timer.arm(this.engine.nextDeadline());
    return summary;
  }

  /** Answer waiters `UNAVAILABLE`, refuse later calls, stop the timer and persist the bound. Idempotent. */
  close(): Promise<void> {
    return this.closeWith(new LeaseholdError("UNAVAILABLE", "the lock server is shutting down"));
  }

  /**
   * {@link close}, answering waiters (and later calls) with `error` instead: a cluster leader that
   * loses a shard says why, so clients know to re-send to the new leader.
   */
  closeWith(error: LeaseholdError): Promise<void> {
    if (this.closing === null) {
      this.closedError = error;
      // Synchronous, so no call or timer can slip in between "closing" and "waiters answered".
      this.timer.clear();
      this.activity.close();
      // Long polls wake, find the service closed and answer `error`.
      for (const wake of [...this.polls]) wake();
      this.engine.close(error);
      try {
        this.reserver.persist();
        this.closing = Promise.resolve();
      } catch (err) {
        this.closing = Promise.reject(err instanceof Error ? err : new Error(String(err)));
      }
    }
    return this.closing;
  }
}
