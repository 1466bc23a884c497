import type { LockBatchResultListener, LockRequest, LockResponse } from "@leasehold/protocol";
import type { EmbeddedLockService, LockTableSnapshot, ServiceMetrics, WaitingLock } from "../../src/service/embedded-lock-service.js";
import type { LockBatchRun } from "../../src/service/run-lock-batch.js";

const EMPTY_METRICS: ServiceMetrics = {
  namespaces: 0,
  heldLocks: 0,
  heldTokens: 0,
  waitingRequests: 0,
  grantsTotal: 0,
  timeoutsTotal: 0,
  leaseLapsesTotal: 0,
  unlocksTotal: 0,
  abandonedTotal: 0,
};

/**
 * A scriptable stand-in for the lock service, for HTTP behaviours the real one cannot be made to
 * show on demand: a grant that lands after its client left, or a bug that throws. `lock` answers
 * whatever `onLock` returns and ignores the abort signal on purpose.
 */
export class FakeLockService implements EmbeddedLockService {
  readonly leaderId = "fake-leader";
  readonly unlocked: string[][] = [];
  onLock: (request: LockRequest) => Promise<LockResponse> = () => Promise.resolve({ status: "timeout" });
  onTimestamps: () => Promise<{ start: number; count: number }> = () => Promise.resolve({ start: 1, count: 1 });
  /** What a batch run says of its open entries (`LockBatchRun.onlyAcknowledging`). Default false: they wait for locks. */
  acknowledging = false;

  lock(_namespace: string, request: LockRequest): Promise<LockResponse> {
    return this.onLock(request);
  }
  /** Every lock "waits" for `onLock`, and abandoning is ignored on purpose (see the class TSDoc). */
  beginLock(_namespace: string, request: unknown): WaitingLock {
    return { answer: this.onLock(request as LockRequest), abandon: () => undefined };
  }
  /** Every entry goes to `onLock`; like `beginLock`, abandoning (and the signal) is ignored on purpose. */
  beginLockBatch(_namespace: string, request: unknown, onResult: LockBatchResultListener): LockBatchRun {
    const requests = (request as { requests: LockRequest[] }).requests;
    const done = Promise.all(
      requests.map((entry, index) =>
        this.onLock(entry).then((result) => onResult({ index, result })),
      ),
    ).then(() => undefined);
    return { done, abandon: () => undefined, onlyAcknowledging: this.acknowledging };
  }
  lockBatch(namespace: string, request: unknown, onResult: LockBatchResultListener): Promise<void> {
    return this.beginLockBatch(namespace, request, onResult).done;
  }
  async waitForLocks() {
    return { status: "timeout" as const };
  }
  beginWaitForLocks() {
    return { status: "timeout" as const };
  }
  async acquireTimestampLease(): Promise<never> {
    throw new Error("FakeLockService has no timestamp leases");
  }
  async minLeasedTimestamp() {
    return { minLeased: 1 };
  }
  async cancelLock() {
    return { cancelled: false };
  }
  async lockWatches() {
    return { prefixes: [] };
  }
  async lockEvents() {
    return { type: "snapshot" as const, logId: this.leaderId, version: 0, locked: [], prefixes: [] };
  }
  async unlock(_namespace: string, request: { tokens: string[] }) {
    this.unlocked.push(request.tokens);
    return { unlocked: request.tokens };
  }
  async refresh() {
    return { refreshed: [], lease: { leaderId: this.leaderId, validForMs: 1 } };
  }
  timestamps() {
    return this.onTimestamps();
  }
  async startTransactions() {
    return { immutableTimestamp: 1, transactions: [], lease: { leaderId: this.leaderId, validForMs: 1 } };
  }
  async immutableTimestamp() {
    return { immutableTimestamp: 1 };
  }
  async health() {
    return { status: "ok" as const, leaderId: this.leaderId, version: "test" };
  }
  metrics(): ServiceMetrics {
    return EMPTY_METRICS;
  }
  inspectNamespaces() {
    return { namespaces: [] };
  }
  namespaceSummaries() {
    return [];
  }
  async inspectLocks(namespace: string) {
    const summary = { namespace, heldLocks: 0, heldTokens: 0, waitingRequests: 0, immutableTimestampLocks: 0 };
    return { namespace, view: "descriptors" as const, summary, descriptors: [] };
  }
  async revoke() {
    return { revoked: [], notFound: [] };
  }
  snapshot(): LockTableSnapshot {
    return { descriptors: [], heldTokens: 0, waitingRequests: 0, immutableLocks: [], nextTimestamp: 1 };
  }
  async close(): Promise<void> {}
}
