import { LeaseholdError, type LockResponse, type WaitForLocksResponse } from "@leasehold/protocol";
import type { PendingLock } from "../engine/pending-lock.js";
import type { SettledOutcome } from "../engine/lock-table.js";
import { WAIT_TIMEOUT } from "../engine/timeout-answers.js";
import { cancelled, WaitingLockHandle } from "./waiting-lock-handle.js";

/** What a waiting request resolves with: a lock's answer or a wait's. */
export type WaitAnswer = LockResponse | WaitForLocksResponse;

/** One caller attached to a waiting request (a retry with the same requestId adds another). */
interface Caller {
  readonly resolve: (answer: WaitAnswer) => void;
  readonly reject: (error: LeaseholdError) => void;
}

/** The callers of one waiting request. */
export type CallerGroup = Set<Caller>;

const noop = (): void => undefined;

/**
 * The callers of the service's waiting requests, by the engine's {@link PendingLock}: several
 * when retries with the same requestId join one request. Only requests that wait pass through
 * here; an answer given at once never does.
 */
export class WaitingCallers {
  private readonly waiting = new Map<PendingLock, CallerGroup>();
  /** Called when the last caller of a request has gone: the request leaves the engine's queues. */
  private readonly abandon: (pending: PendingLock) => void;

  /** `abandon` runs once a request's last caller abandons it (the service decides if the engine hears of it). */
  constructor(abandon: (pending: PendingLock) => void) {
    this.abandon = abandon;
  }

  /**
   * Attach one more caller to a waiting request: its answer, and an abandon that leaves the
   * queues once every caller sharing the request (its requestId retries) has gone.
   */
  join<T extends WaitAnswer>(attempt: PendingLock): WaitingLockHandle<T> {
    let callers = this.waiting.get(attempt);
    if (callers === undefined) this.waiting.set(attempt, (callers = new Set()));
    const group = callers;
    let caller: Caller = { resolve: noop, reject: noop };
    const answer = new Promise<T>((resolve, reject) => {
      caller = { resolve: resolve as (answer: WaitAnswer) => void, reject };
    });
    group.add(caller);
    return new WaitingLockHandle<T>(answer, () => {
      if (!group.delete(caller)) return;
      caller.reject(cancelled());
      if (group.size === 0 && this.waiting.get(attempt) === group) {
        this.waiting.delete(attempt);
        this.abandon(attempt);
      }
    });
  }

  /** The request's callers, no longer tracked (so none is answered twice); undefined when it has none. */
  take(pending: PendingLock): CallerGroup | undefined {
    const callers = this.waiting.get(pending);
    this.waiting.delete(pending);
    return callers;
  }
}

/** Answer every caller of a settled request with its outcome. */
export function answerCallers(callers: CallerGroup, outcome: SettledOutcome): void {
  for (const caller of callers) {
    if (outcome instanceof LeaseholdError) caller.reject(outcome);
    else caller.resolve(outcome);
  }
}

/**
 * Answer every caller of a request cancelled by `lock-cancel`: a cancelled wait (`wait-for-locks`)
 * ends as a timeout, as the protocol says; a lock fails with `error`. The group is emptied so a
 * caller's own later abandon finds nothing left to do.
 */
export function cancelCallers(callers: CallerGroup, waitOnly: boolean, error: LeaseholdError): void {
  for (const caller of callers) if (waitOnly) caller.resolve(WAIT_TIMEOUT);
  else caller.reject(error);
  callers.clear();
}
