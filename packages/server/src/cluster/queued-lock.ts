import { LeaseholdError, type LockResponse } from "@leasehold/protocol";
import { TIMEOUT } from "../engine/timeout-answers.js";
import { WaitingLockHandle } from "../service/waiting-lock-handle.js";
import { realProcessClock, type ProcessClock } from "./process-clock.js";

/** What a held-back request needs of its (validated) body: a `lock` or a `wait-for-locks`. */
interface HeldBackRequest {
  readonly requestId?: string | undefined;
  readonly acquireTimeoutMs?: number | undefined;
}

/** A held-back request of either kind, as its term's line keeps it. */
export interface HeldBack {
  readonly request: HeldBackRequest;
  /** Monotonic deadline: when it was queued plus its `acquireTimeoutMs`. */
  readonly deadline: number;
  readonly handle: { abandon(): void };
  start(now: number): void;
  fail(error: LeaseholdError): void;
  cancel(): void;
}

const noop = (): void => undefined;

/**
 * A lock request a new leader holds back until it may grant (its lease-wait is over and the
 * namespace's bound is loaded). It keeps its place in its namespace's first-in-first-out line and
 * is answered `timeout` at its own deadline if it is still held back then (PROTOCOL.md "Leases
 * across failover"). A `wait-for-locks` is held back the same way, in the same line (`A` is then
 * its answer), since an earlier leader's locks may still be held.
 */
export class QueuedLock<A extends { readonly status: string } = LockResponse> implements HeldBack {
  /** What the caller holds: settles with the eventual answer. */
  readonly handle: WaitingLockHandle<A>;
  /** True once answered, abandoned or handed to the engine. */
  done = false;
  private resolve: (answer: A) => void = noop;
  private reject: (error: LeaseholdError) => void = noop;
  private inner: WaitingLockHandle<A> | null = null;
  private readonly cancelTimer: () => void = noop;

  constructor(
    readonly request: HeldBackRequest,
    /** Monotonic deadline: when it was queued plus its `acquireTimeoutMs`. */
    readonly deadline: number,
    now: number,
    private readonly onLeave: (lock: HeldBack) => void,
    /**
     * Answer `timeout` at the deadline while still held back. True during the lease-wait (the
     * protocol's "answered timeout at its own deadline"); false when only the namespace's bound is
     * loading, which takes one round trip and must not turn a grantable request into a timeout.
     */
    armDeadline: boolean,
    /** The service's `beginLock` (or `beginWaitForLocks`): its answer (or wait) becomes this request's. */
    private readonly begin: (request: unknown) => A | WaitingLockHandle<A>,
    /** What `lock-cancel` answers it with (a wait: `timeout`); undefined: it fails `CANCELLED`, as a lock does. */
    private readonly cancelledAs?: A | undefined,
    /** Sets the deadline's timer on the term's clock. Default: Node's `setTimeout`, unref'd. */
    setTimer: ProcessClock["setTimer"] = realProcessClock.setTimer,
  ) {
    const answer = new Promise<A>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
    this.handle = new WaitingLockHandle<A>(answer, () => this.abandon());
    if (armDeadline) {
      // Both a lock and a wait answer `{ status: "timeout" }` at their deadline.
      this.cancelTimer = setTimer(() => this.settle(TIMEOUT as unknown as A), Math.max(0, Math.ceil(deadline - now)));
    }
  }

  /** Hand the request to the engine now, with what is left of its wait. */
  start(now: number): void {
    if (this.done) return;
    this.done = true;
    this.cancelTimer();
    let begun: A | WaitingLockHandle<A>;
    try {
      begun = this.begin({ ...this.request, acquireTimeoutMs: Math.max(0, Math.floor(this.deadline - now)) });
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
    this.cancelTimer();
    this.reject(error);
  }

  /** `lock-cancel` of a held-back request: a lock is abandoned (`CANCELLED`), a wait ends with its `cancelledAs`. */
  cancel(): void {
    if (this.cancelledAs === undefined) this.abandon();
    else this.settle(this.cancelledAs);
  }

  private settle(answer: A): void {
    if (this.done) return;
    this.done = true;
    this.onLeave(this);
    this.resolve(answer);
  }

  private abandon(): void {
    if (this.inner !== null) return this.inner.abandon();
    if (this.done) return;
    this.done = true;
    this.cancelTimer();
    this.onLeave(this);
    this.reject(new LeaseholdError("CANCELLED", "the lock request was abandoned: its caller aborted or disconnected"));
  }
}
