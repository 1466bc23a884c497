import type { GrantEvent, History, ReleaseEvent, ResourceOperation } from "./history-types.js";

/** A grant as recorded so far: its guarantee may still be extended while the lock is held. */
interface OpenGrant {
  event: GrantEvent;
}

/**
 * Collects the events of a run as they happen: grants (with the lease guarantee the holder was
 * given), releases, and every operation the resources receive, numbered in the order they arrive.
 * It only records; {@link checkHistory} judges. Everything runs on one event loop, so recording is
 * synchronous and the sequence numbers are the resources' true order of arrival.
 */
export class HistoryRecorder {
  readonly #now: () => number;
  readonly #grants = new Map<string, OpenGrant>();
  readonly #releases: ReleaseEvent[] = [];
  readonly #operations: ResourceOperation[] = [];

  /** @param now - The clock every event is stamped with. Default `performance.now` (monotonic). */
  constructor(now: () => number = () => performance.now()) {
    this.#now = now;
  }

  /** The recorder's clock: holders stamp their own events (request sent, grant received) with it. */
  now(): number {
    return this.#now();
  }

  /** Record a grant. Each holder names one grant, so a second grant for the same holder is a bug and throws. */
  grant(event: GrantEvent): void {
    if (this.#grants.has(event.holder)) throw new Error(`history: holder ${event.holder} was granted twice`);
    this.#grants.set(event.holder, { event: { ...event } });
  }

  /**
   * The holder renewed its lease after the grant (an explicit `refresh` that answered its token):
   * its guarantee now runs until `until` (the refresh's send time plus the lease's `validForMs`),
   * if that is later than before.
   */
  extendGuarantee(holder: string, until: number): void {
    const open = this.#grants.get(holder);
    if (open === undefined) throw new Error(`history: guarantee extended for unknown holder ${holder}`);
    if (until > open.event.guaranteeEndsAt) open.event = { ...open.event, guaranteeEndsAt: until };
  }

  /** Record that `holder` released its lock at `at` (default: now). */
  release(holder: string, at: number = this.#now()): void {
    this.#releases.push({ holder, releasedAt: at });
  }

  /** Record an operation a resource received; it gets the next sequence number, which is returned. */
  operation(op: Omit<ResourceOperation, "seq">): ResourceOperation {
    const recorded: ResourceOperation = { ...op, seq: this.#operations.length };
    this.#operations.push(recorded);
    return recorded;
  }

  /** Grants, releases and operations recorded so far. */
  get counts(): { grants: number; releases: number; operations: number } {
    return { grants: this.#grants.size, releases: this.#releases.length, operations: this.#operations.length };
  }

  /** The history so far, with the resources' final counters (by descriptor). */
  history(finalCounters: Readonly<Record<string, number>>): History {
    return {
      grants: [...this.#grants.values()].map((g) => g.event),
      releases: [...this.#releases],
      operations: [...this.#operations],
      finalCounters: { ...finalCounters },
    };
  }
}
