import { LeaseholdError, type LockResponse, type requestValidators } from "@leasehold/protocol";
import { WaitingLockHandle } from "../service/waiting-lock-handle.js";

/** A lock request as the protocol's validator returns it. */
type LockRequest = ReturnType<(typeof requestValidators)["lock"]["parse"]>;

const TIMEOUT: LockResponse = Object.freeze({ status: "timeout" });
const noop = (): void => undefined;

/**
 * A lock request a new leader holds back until it may grant (its lease-wait is over and the
 * namespace's bound is loaded). It keeps its place in its namespace's first-in-first-out line and
 * is answered `timeout` at its own deadline if it is still held back then (PROTOCOL.md "Leases
 * across failover").
 */
export class QueuedLock {
  /** What the caller holds: settles with the eventual answer. */
  readonly handle: WaitingLockHandle;
  /** True once answered, abandoned or handed to the engine. */
  done = false;
  private resolve: (answer: LockResponse) => void = noop;
  private reject: (error: LeaseholdError) => void = noop;
  private inner: WaitingLockHandle | null = null;
  private readonly timer: NodeJS.Timeout | undefined;

  constructor(
    readonly request: LockRequest,
    /** Monotonic deadline: when it was queued plus its `acquireTimeoutMs`. */
    readonly deadline: number,
    now: number,
    private readonly onLeave: (lock: QueuedLock) => void,
    /**
     * Answer `timeout` at the deadline while still held back. True during the lease-wait (the
     * protocol's "answered timeout at its own deadline"); false when only the namespace's bound is
     * loading, which takes one round trip and must not turn a grantable request into a timeout.
     */
    armDeadline: boolean,
  ) {
    const answer = new Promise<LockResponse>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
    this.handle = new WaitingLockHandle(answer, () => this.abandon());
    if (armDeadline) {
      this.timer = setTimeout(() => this.settle(TIMEOUT), Math.max(0, Math.ceil(deadline - now)));
      this.timer.unref();
    }
  }

  /**
   * Hand the request to the engine now, with what is left of its wait. `begin` is the service's
   * `beginLock`; its answer (or wait) becomes this request's.
   */
  start(now: number, begin: (request: unknown) => LockResponse | WaitingLockHandle): void {
    if (this.done) return;
    this.done = true;
    clearTimeout(this.timer);
    let begun: LockResponse | WaitingLockHandle;
    try {
      begun = begin({ ...this.request, acquireTimeoutMs: Math.max(0, Math.floor(this.deadline - now)) });
    } catch (err) {
      this.reject(err instanceof LeaseholdError ? err : new LeaseholdError("INTERNAL", String(err)));
      return;
    }
    if (!(begun instanceof WaitingLockHandle)) return this.resolve(begun);
    this.inner = begun;
    begun.answer.then(this.resolve, this.reject);
  }

  /** Answer with an error (the term ended) unless already answered or started. */
  fail(error: LeaseholdError): void {
    if (this.done) return;
    this.done = true;
    clearTimeout(this.timer);
    this.reject(error);
  }

  private settle(answer: LockResponse): void {
    if (this.done) return;
    this.done = true;
    this.onLeave(this);
    this.resolve(answer);
  }

  private abandon(): void {
    if (this.inner !== null) return this.inner.abandon();
    if (this.done) return;
    this.done = true;
    clearTimeout(this.timer);
    this.onLeave(this);
    this.reject(new LeaseholdError("CANCELLED", "the lock request was abandoned: its caller aborted or disconnected"));
  }
}
