import { LeaseholdError, type Lease, type LockAcquiredResponse, type LockResponse, type LockSpec, type WaitForLocksResponse } from "@leasehold/protocol";
import type { LockAttempt } from "./lock-engine-options.js";
import { DeadlineHeap } from "./deadline-heap.js";
import { DescriptorState } from "./descriptor-state.js";
import { LeaseQueue } from "./lease-queue.js";
import { PERMIT, modeCode } from "./lock-mode-codes.js";
import { DONE, HELD, type LockRequestState } from "./lock-request-state.js";
import type { NamespaceState } from "./namespace-state.js";
import type { PendingLock } from "./pending-lock.js";
import { sameIdentity } from "./request-identity.js";
import { forgetIdle } from "./spec-descriptors.js";
import type { TokenSource } from "./token-source.js";
import type { ReleaseReason, ReplicationSink, WaiterEndReason } from "./replication-entries.js";
import { grantEntry, waiterEntry } from "./replication-emit.js";

/** What a wait that passed every descriptor answers. */
export const WAIT_FREE: WaitForLocksResponse = Object.freeze({ status: "free" });

/** What a request that waited settles with: a lock's answer, a wait's, or an error. */
export type SettledOutcome = LockResponse | WaitForLocksResponse | LeaseholdError;

/**
 * The grant machinery behind {@link LockEngine}: taking descriptors, queueing, watching, granting
 * waiters when something is released, and releasing. It owns the lease queue and the waiters'
 * deadline heap because granting and releasing must keep both in step; the engine owns the
 * operations, time and namespaces.
 */
export class LockTable {
  /** Descriptors whose queue head could not take its fencing token yet (see {@link pump}). */
  private readonly stalled = new Map<DescriptorState, NamespaceState>();
  /** Every live token, in lease-expiry order. */
  readonly leases = new LeaseQueue<LockRequestState>();
  /** Every waiting request, by deadline. */
  readonly deadlines = new DeadlineHeap<PendingLock>();
  /** The current time, set by the engine at the start of every operation. */
  now = 0;
  /** Descriptor holds right now (waiting all-or-none requests' partial holds included). */
  heldLocks = 0;
  /** Descriptor grants since start. */
  grantsTotal = 0;
  /**
   * Where replication entries go (see `LockEngine.setReplicationSink`). Null by default, which
   * costs one null check per change and allocates nothing.
   */
  sink: ReplicationSink | null = null;
  /**
   * True once the table carries tokens minted by another process (a promoted replica): every new
   * token is then checked against the namespace's live ones, so none is ever minted twice, even
   * by a predictable token source.
   */
  guardTokens = false;

  constructor(
    private readonly tokens: TokenSource,
    private readonly lease: Lease,
    /** Lease duration in milliseconds (a replica installs tokens with it). */
    readonly leaseMs: number,
    private readonly onSettled: (pending: PendingLock, outcome: SettledOutcome) => void,
  ) {}

  /**
   * The live permit limit: the newest request's limit applies on arrival, whatever its outcome.
   * Returns true when it brought a descriptor into use just to record a limit; the caller must
   * then drop those that stay idle, or they would linger.
   */
  applyLimits(ns: NamespaceState, specs: readonly LockSpec[]): boolean {
    let created = false;
    for (let i = 0; i < specs.length; i++) {
      const spec = specs[i] as LockSpec;
      if (spec.limit === undefined) continue;
      let d = ns.descriptors.get(spec.descriptor);
      // Replicated for every permit spec, even an unchanged limit or an idle descriptor kept in the
      // map: a replica may lack the descriptor, or hold it with another limit (made fresh where the
      // leader reused an idle one), and a later take reuses it, limit and all.
      if (this.sink !== null) this.sink(ns.name, { type: "limit", descriptor: spec.descriptor, limit: spec.limit });
      if (d === undefined) {
        d = new DescriptorState(spec.descriptor, spec.limit);
        ns.descriptors.set(spec.descriptor, d);
        created = true;
      }
      const raised = spec.limit > d.limit;
      d.limit = spec.limit;
      if (raised && d.holderMode === PERMIT) this.pump(ns, d);
    }
    return created;
  }

  /** All-or-none: take descriptors in ascending order until one is not grantable; queue there. */
  advanceAllOrNone(req: LockRequestState): boolean {
    const specs = req.specs as readonly LockSpec[];
    const descriptors = req.namespace.descriptors;
    while (req.nextIndex < specs.length) {
      const spec = specs[req.nextIndex] as LockSpec;
      const mode = modeCode(spec.mode);
      let d = descriptors.get(spec.descriptor);
      if (d === undefined) {
        // A wait passes a descriptor nobody uses without bringing it into use.
        if (req.waitOnly) {
          req.nextIndex++;
          continue;
        }
        d = new DescriptorState(spec.descriptor, spec.limit);
        descriptors.set(spec.descriptor, d);
      } else if (!d.grantableNow(mode)) {
        d.enqueue(req.waiter(), mode);
        return false;
      }
      if (!req.waitOnly) this.take(req, d, mode);
      req.nextIndex++;
    }
    return true;
  }

  /** as-many-as-possible: take every descriptor grantable now, in ascending order, up to max. */
  takeAvailable(req: LockRequestState): boolean {
    const specs = req.specs as readonly LockSpec[];
    const descriptors = req.namespace.descriptors;
    for (let i = 0; i < specs.length && req.heldCount < req.max; i++) {
      const spec = specs[i] as LockSpec;
      const mode = modeCode(spec.mode);
      let d = descriptors.get(spec.descriptor);
      if (d === undefined) {
        d = new DescriptorState(spec.descriptor, spec.limit);
        descriptors.set(spec.descriptor, d);
      } else if (!d.grantableNow(mode)) continue;
      this.take(req, d, mode);
    }
    return req.heldCount > 0;
  }

  /** Give `req` one descriptor; each grant takes the namespace's next number as its fencing token. */
  take(req: LockRequestState, d: DescriptorState, mode: number): void {
    // The number first: if the reserver must run and fails, nothing has changed yet.
    const fencingToken = req.namespace.take(1);
    d.addHolder(mode);
    req.addHold(d, fencingToken);
    req.namespace.heldLocks++;
    this.heldLocks++;
    this.grantsTotal++;
  }

  /** Turn a request that holds everything it gets into a live token. */
  grant(req: LockRequestState): LockAcquiredResponse {
    const ns = req.namespace;
    req.trimHolds();
    req.status = HELD;
    req.grantedAt = Math.floor(this.now);
    const token = (req.token = this.mint(ns));
    ns.tokens.set(token, req);
    this.leases.append(req, this.now + this.leaseMs);
    if (req.requestId === undefined) req.specs = null;
    if (ns.watchLog !== null) ns.watchLog.granted(req, this.now);
    if (this.sink !== null) this.sink(ns.name, grantEntry(req, req.pending));
    return { status: "acquired", token, lease: this.lease, acquired: req.acquired() };
  }

  /** The answer of a granted request again (a requestId retry): same token, same fencing tokens. */
  answer(req: LockRequestState): LockAcquiredResponse {
    return { status: "acquired", token: req.token, lease: this.lease, acquired: req.acquired() };
  }

  /** Grant a request that was waiting (a wait: end it `free`) and tell its caller through `onSettled`. */
  grantWaiting(req: LockRequestState): void {
    const ns = req.namespace;
    const pending = req.pending as PendingLock;
    this.deadlines.remove(pending);
    ns.waiting.delete(req);
    if (pending.watching) this.unwatch(req);
    if (req.waitOnly) {
      if (this.sink !== null) this.sink(ns.name, { type: "waiter-ended", serial: pending.waitSerial, reason: "free" });
      req.status = DONE;
      ns.forgetRequestId(req);
      req.pending = null;
      this.onSettled(pending, WAIT_FREE);
      return;
    }
    const answer = this.grant(req);
    req.pending = null;
    this.onSettled(pending, answer);
  }

  /** Make an as-many-as-possible request wait, outside every queue, for any of its descriptors. */
  watch(req: LockRequestState): void {
    const specs = req.specs as readonly LockSpec[];
    const descriptors = req.namespace.descriptors;
    for (let i = 0; i < specs.length; i++) {
      const spec = specs[i] as LockSpec;
      let d = descriptors.get(spec.descriptor);
      if (d === undefined) {
        d = new DescriptorState(spec.descriptor, spec.limit);
        descriptors.set(spec.descriptor, d);
      }
      d.watch(req, modeCode(spec.mode));
    }
    req.waiter().watching = true;
  }

  /** Take a watcher off every watch list, dropping descriptors only it kept in use. */
  unwatch(req: LockRequestState): void {
    (req.pending as PendingLock).watching = false;
    const specs = req.specs as readonly LockSpec[];
    const descriptors = req.namespace.descriptors;
    for (let i = 0; i < specs.length; i++) {
      const d = descriptors.get((specs[i] as LockSpec).descriptor);
      if (d === undefined) continue;
      d.unwatch(req);
      if (d.isIdle()) req.namespace.retire(d);
    }
  }

  /**
   * Grant what a descriptor can now give: successive queue heads while compatible (FIFO, no
   * overtaking), then, once nobody is queued, the watchers it has become grantable for.
   */
  pump(ns: NamespaceState, d: DescriptorState): void {
    try {
      this.pumpNow(ns, d);
    } catch (err) {
      // The queue head's fencing token needs a bound extension still under way (a cluster leader's
      // reserver answers 503 meanwhile): nothing changed for it (take draws the number first). It
      // stays at the head and is pumped again at the next catch-up, instead of the error escaping
      // from whatever released the descriptor: an unlock's answer, or a lapse on a timer, where it
      // was an uncaught exception (found by pnpm sim with a reservation block of 2).
      if (!(err instanceof LeaseholdError) || err.code !== "UNAVAILABLE") throw err;
      this.stalled.set(d, ns);
    }
  }

  /** Pump again every descriptor {@link pump} left stalled on a bound extension (call at each catch-up, before reaping). */
  repumpStalled(): void {
    if (this.stalled.size === 0) return;
    const stalled = [...this.stalled];
    this.stalled.clear();
    for (const [d, ns] of stalled) if (!d.retired) this.pump(ns, d);
  }

  private pumpNow(ns: NamespaceState, d: DescriptorState): void {
    for (let head = d.queueHead; head !== null && d.compatible(head.queueMode); head = d.queueHead) {
      const req = head.request;
      // A wait at the head passes on without taking: the next in line is then looked at as if it were not there.
      if (!req.waitOnly) this.take(req, d, head.queueMode);
      d.dequeue(head);
      req.nextIndex++;
      if (this.advanceAllOrNone(req)) this.grantWaiting(req);
      else if (this.sink !== null) this.sink(ns.name, waiterEntry(req, this.now));
    }
    // Only watchers the descriptor can be granted to are visited (WatcherLists): a release that
    // grants nobody costs O(1) however many watch. Each one found is granted (it takes at least
    // this descriptor), which unwatches it, so the loop ends after the last grantable one.
    for (let w = d.watchers; d.queueHead === null && w !== null; w = d.watchers) {
      const watcher = w.firstGrantable(d);
      if (watcher === null || !this.takeAvailable(watcher)) break;
      this.grantWaiting(watcher);
    }
    if (d.isIdle()) ns.retire(d);
  }

  /** Release every descriptor `req` holds, granting whoever can go next on each. */
  releaseHolds(req: LockRequestState): void {
    const ns = req.namespace;
    const n = req.heldCount;
    this.heldLocks -= n;
    ns.heldLocks -= n;
    // Free everything first, then wake waiters: a waiting as-many-as-possible claim woken by the
    // first descriptor must see all of them free ("takes what it can at that moment").
    for (let i = 0; i < n; i++) req.heldAt(i).removeHolder();
    for (let i = 0; i < n; i++) this.pump(ns, req.heldAt(i));
  }

  /** End a live token (unlock, lapse, revoke): forget it, its requestId and its lease, and release its holds. */
  releaseToken(req: LockRequestState, reason: ReleaseReason): void {
    const ns = req.namespace;
    if (this.sink !== null) this.sink(ns.name, { type: "release", token: req.token, reason });
    req.status = DONE;
    ns.tokens.delete(req.token);
    this.leases.remove(req);
    ns.forgetRequestId(req);
    if (req.leaseName !== undefined) ns.releasedLease(req);
    else if (req.startTimestamp !== 0) ns.releasedImmutable();
    else {
      if (ns.watchLog !== null) ns.watchLog.released(req, this.now);
      this.releaseHolds(req);
    }
  }

  /**
   * Take a waiting request out of everything (timeout, abandonment) and release what it holds.
   * Answers its handle, which the caller settles; the request itself lets go of it.
   */
  endWaiting(req: LockRequestState, reason: WaiterEndReason): PendingLock {
    const ns = req.namespace;
    const pending = req.pending as PendingLock;
    if (this.sink !== null) this.sink(ns.name, { type: "waiter-ended", serial: pending.waitSerial, reason });
    req.status = DONE;
    this.deadlines.remove(pending);
    ns.waiting.delete(req);
    ns.forgetRequestId(req);
    const queuedOn = pending.queuedOn;
    if (queuedOn !== null) {
      queuedOn.dequeue(pending);
      this.pump(ns, queuedOn);
    }
    if (pending.watching) this.unwatch(req);
    this.releaseHolds(req);
    req.pending = null;
    return pending;
  }

  /**
   * A lock request re-sent with a live `requestId`: the same request again answers what the first
   * is (its grant, with the lease renewed, or its pending wait, with the later deadline); a
   * different one is `REQUEST_ID_CONFLICT`.
   */
  retry(req: LockRequestState, specs: readonly LockSpec[], allOrNone: boolean, max: number, deadline: number): LockAttempt {
    // A wait or a timestamp lease holding the id is never the same as a lock request.
    if (req.waitOnly || req.leaseName !== undefined || !sameIdentity(req, specs, allOrNone, max)) {
      throw new LeaseholdError(
        "REQUEST_ID_CONFLICT",
        `requestId ${JSON.stringify(req.requestId)} is in use by a request with different locks, behavior or max`,
        { path: "requestId" },
      );
    }
    if (this.applyLimits(req.namespace, specs)) forgetIdle(req.namespace, specs);
    if (req.status === HELD) {
      this.leases.renew(req, this.now + this.leaseMs);
      return this.answer(req);
    }
    const pending = req.pending as PendingLock;
    if (Math.ceil(deadline) > pending.deadline) {
      pending.deadline = Math.ceil(deadline);
      this.deadlines.update(pending);
      if (this.sink !== null) this.sink(req.namespace.name, waiterEntry(req, this.now));
    }
    return pending;
  }

  /** A new token, never one the namespace holds live (checked only once {@link guardTokens} is set). */
  mint(ns: NamespaceState): string {
    let token = this.tokens.next();
    if (this.guardTokens) while (ns.tokens.has(token)) token = this.tokens.next();
    return token;
  }
}
