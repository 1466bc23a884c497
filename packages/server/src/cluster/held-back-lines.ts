import type { LeaseholdError } from "@leasehold/protocol";
import type { WaitingLockHandle } from "../service/waiting-lock-handle.js";
import { coordinatorUnavailable } from "./cluster-errors.js";
import type { ProcessClock } from "./process-clock.js";
import { QueuedLock, type HeldBack } from "./queued-lock.js";
import type { ShardReserver } from "./shard-reserver.js";

/** What {@link HeldBackLines} needs of its term. */
export interface HeldBackLinesHost {
  /** Monotonic milliseconds (a held-back request's deadline counts from its arrival). */
  readonly clock: () => number;
  /** Sets a held-back request's deadline timer. Default: Node's `setTimeout`, unref'd. */
  readonly setTimer?: ProcessClock["setTimer"] | undefined;
  /** True while the term's lease-wait holds grants back (each request notes it on arrival). */
  readonly waiting: () => boolean;
  /** Loads a namespace's timestamp bound; a line starts only once it is loaded. */
  readonly reserver: Pick<ShardReserver, "isPrepared" | "prepare">;
  /** True when `namespace`'s line may start now: the term lives, its lease-wait is over, the bound is loaded. */
  readonly mayStart: (namespace: string) => boolean;
  /** The `retryAfterMs` of the 503 a line is failed with when its bound cannot be loaded. */
  readonly retryAfterMs: number;
}

/**
 * A new term's held-back requests (locks and `wait-for-locks`), one first-in-first-out line per
 * namespace (PROTOCOL.md "Leases across failover"): a request that arrives while the term may not
 * grant yet, or while its namespace's line is not empty, queues at the end of the line; a line
 * starts, in order, once its namespace may start ({@link HeldBackLinesHost.mayStart}); each request
 * is answered `timeout` at its own deadline if still held back then (queued-lock.ts).
 */
export class HeldBackLines {
  /** Held-back requests per namespace, in arrival order (their answer types differ). */
  private readonly lines = new Map<string, HeldBack[]>();

  constructor(private readonly host: HeldBackLinesHost) {}

  /** True while `namespace` has a line: a request of it must queue behind it. */
  has(namespace: string): boolean {
    return this.lines.has(namespace);
  }

  /**
   * Queue a request at the end of `namespace`'s line (loading the namespace's bound if needed);
   * `begin` runs it once the line starts. Answers what the caller holds meanwhile.
   */
  hold<A extends { readonly status: string }>(
    namespace: string,
    request: { readonly requestId?: string | undefined; readonly acquireTimeoutMs?: number | undefined },
    begin: (request: unknown) => A | WaitingLockHandle<A>,
    cancelledAs?: A,
  ): WaitingLockHandle<A> {
    const now = this.host.clock();
    let queue = this.lines.get(namespace);
    if (queue === undefined) this.lines.set(namespace, (queue = []));
    const line = queue;
    const queued = new QueuedLock<A>(
      request,
      now + (request.acquireTimeoutMs ?? 0),
      now,
      (gone) => {
        const i = line.indexOf(gone);
        if (i >= 0) line.splice(i, 1);
      },
      this.host.waiting(),
      begin,
      cancelledAs,
      this.host.setTimer,
    );
    line.push(queued);
    if (!this.host.reserver.isPrepared(namespace)) {
      this.host.reserver.prepare(namespace).then(
        () => this.drain(namespace),
        (err: unknown) => this.fail(namespace, coordinatorUnavailable(err, this.host.retryAfterMs)),
      );
    }
    return queued.handle;
  }

  /** Cancel held-back requests of `namespace` with this `requestId`; true when there were some. */
  cancel(namespace: string, requestId: string): boolean {
    const queue = this.lines.get(namespace);
    if (queue === undefined) return false;
    let found = false;
    for (const queued of [...queue]) {
      if (queued.request.requestId !== requestId) continue;
      found = true;
      queued.cancel();
    }
    return found;
  }

  /** Start `namespace`'s line, in order, if it may start now. */
  drain(namespace: string): void {
    if (!this.host.mayStart(namespace)) return;
    const queue = this.lines.get(namespace);
    if (queue === undefined) return;
    this.lines.delete(namespace);
    const now = this.host.clock();
    for (const queued of queue) queued.start(now);
  }

  /** Start every line that may start now (the lease-wait is over). */
  drainAll(): void {
    for (const namespace of [...this.lines.keys()]) this.drain(namespace);
  }

  /** Answer every request of `namespace`'s line with `error`. */
  fail(namespace: string, error: LeaseholdError): void {
    const queue = this.lines.get(namespace);
    if (queue === undefined) return;
    this.lines.delete(namespace);
    for (const queued of queue) queued.fail(error);
  }

  /** Answer every held-back request with `error` (the term ended). */
  failAll(error: LeaseholdError): void {
    for (const namespace of [...this.lines.keys()]) this.fail(namespace, error);
  }
}
