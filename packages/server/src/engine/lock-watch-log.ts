import { LeaseholdError, LIMITS, type LockEvent, type LockWatchSince, type LockWatchUpdate, type WatchedLock } from "@leasehold/protocol";
import { HELD, type LockRequestState } from "./lock-request-state.js";

/**
 * Events a namespace's log keeps at least (PROTOCOL.md "Lock watches": "at least the last
 * 10,000"). A follower further behind gets a snapshot, which costs it one walk of the held locks.
 */
export const LOCK_EVENTS_KEPT = 10_000;

/**
 * One namespace's lock-event log (TimeLock's lock watch service): the watched prefixes with their
 * expiry, and the last {@link LOCK_EVENTS_KEPT} lock and unlock events on watched descriptors.
 *
 * Versions grow by one per event. The log is whole from {@link floor} up: a follower at a version
 * at or above it gets the events after it; anyone below gets a snapshot. Every change of the set of
 * watched prefixes (a new one, or one that expired) moves the floor up to a new version, so nobody
 * is ever answered events for a set of prefixes other than the one they were logged under: a
 * follower learns the change from the snapshot's `prefixes`, and a read cache never trusts a run
 * of "no events" for a prefix that was not watched all along.
 *
 * The log lives as long as its namespace's lock table, so the table's `leaderId` names it
 * (`logId`): a table that starts empty starts a new log.
 */
export class LockWatchLog {
  /** The version of the newest event (or of the last change of the prefixes). */
  version = 0;
  /** The oldest version the log is whole from. */
  private floor = 0;
  /** Events in version order; `events[head]` is the oldest kept. */
  private events: LockEvent[] = [];
  private head = 0;
  /** Watched prefix → when it lapses, on the engine's clock. */
  private readonly prefixes = new Map<string, number>();
  /** Distinct lengths of the watched prefixes (code units), ascending; how a descriptor is matched. */
  private lengths: number[] = [];
  /** True while `""` is watched: everything matches. */
  private everything = false;
  /** The earliest expiry among the prefixes. */
  private nextExpiry = Infinity;
  /** Called after the log changes (a long poll waiting for it); each is called once and removed. */
  private readonly listeners = new Set<() => void>();

  constructor(readonly logId: string) {}

  /**
   * Watch `prefixes` until `now + ttlMs` (re-registering extends). Refused with `INVALID_ARGUMENT`,
   * changing nothing, when the namespace would watch more than 1,000 prefixes.
   */
  register(prefixes: readonly string[], now: number, ttlMs: number): string[] {
    this.expire(now);
    const fresh = new Set<string>();
    for (const p of prefixes) if (!this.prefixes.has(p)) fresh.add(p);
    const total = this.prefixes.size + fresh.size;
    if (total > LIMITS.maxWatchPrefixesPerNamespace) {
      throw new LeaseholdError(
        "INVALID_ARGUMENT",
        `lock-watches request: prefixes would make ${total} watched prefixes in the namespace; at most ${LIMITS.maxWatchPrefixesPerNamespace} may be watched at once`,
        { path: "prefixes", limit: LIMITS.maxWatchPrefixesPerNamespace },
      );
    }
    const expiresAt = now + ttlMs;
    for (const p of prefixes) this.prefixes.set(p, expiresAt);
    if (expiresAt < this.nextExpiry) this.nextExpiry = expiresAt;
    if (fresh.size > 0) this.prefixesChanged();
    return this.watched();
  }

  /** Every watched prefix, ascending. */
  watched(): string[] {
    return [...this.prefixes.keys()].sort();
  }

  /** Drop prefixes whose time has come; a change of the set starts the log afresh (see the class). */
  expire(now: number): void {
    if (now < this.nextExpiry) return;
    let next = Infinity;
    let dropped = false;
    for (const [p, at] of this.prefixes) {
      if (at <= now) {
        this.prefixes.delete(p);
        dropped = true;
      } else if (at < next) next = at;
    }
    this.nextExpiry = next;
    if (dropped) this.prefixesChanged();
  }

  /** True when `descriptor` falls under a watched prefix. */
  matches(descriptor: string): boolean {
    if (this.everything) return true;
    const lengths = this.lengths;
    for (let i = 0; i < lengths.length; i++) {
      const n = lengths[i] as number;
      if (n > descriptor.length) return false;
      if (this.prefixes.has(n === descriptor.length ? descriptor : descriptor.slice(0, n))) return true;
    }
    return false;
  }

  /** A lock request was granted: log its watched descriptors. */
  granted(req: LockRequestState, now: number): void {
    this.append("lock", req, now);
  }

  /** A granted request's token ended (unlock, lapse, revoke): log its watched descriptors. */
  released(req: LockRequestState, now: number): void {
    this.append("unlock", req, now);
  }

  /**
   * The update for a follower at `since`: the events after it when the log is whole from there,
   * otherwise a snapshot of the watched locks held in `tokens` now.
   */
  update(since: LockWatchSince | null, tokens: ReadonlyMap<string, LockRequestState>, now: number): LockWatchUpdate {
    this.expire(now);
    if (since !== null && since.logId === this.logId && since.version >= this.floor && since.version <= this.version) {
      return { type: "events", logId: this.logId, version: this.version, events: this.eventsAfter(since.version) };
    }
    return { type: "snapshot", logId: this.logId, version: this.version, locked: this.locked(tokens), prefixes: this.watched() };
  }

  /** Call `listener` once, the next time the log changes. Returns a function that cancels it. */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private append(kind: "lock" | "unlock", req: LockRequestState, now: number): void {
    if (now >= this.nextExpiry) this.expire(now);
    if (this.prefixes.size === 0) return;
    const acquired = req.acquired;
    let descriptors: WatchedLock[] | null = null;
    for (let i = 0; i < req.heldCount; i++) {
      const a = acquired[i];
      if (a === undefined || !this.matches(a.descriptor)) continue;
      (descriptors ??= []).push({ descriptor: a.descriptor, mode: a.mode });
    }
    if (descriptors === null) return;
    this.events.push({ version: ++this.version, kind, descriptors });
    if (this.events.length - this.head > LOCK_EVENTS_KEPT) {
      this.floor = (this.events[this.head] as LockEvent).version;
      this.events[this.head++] = undefined as unknown as LockEvent;
      // Compact once the dead front outweighs what is kept: O(1) amortised per event.
      if (this.head >= LOCK_EVENTS_KEPT) {
        this.events = this.events.slice(this.head);
        this.head = 0;
      }
    }
    this.notify();
  }

  private eventsAfter(version: number): LockEvent[] {
    // Versions are consecutive from the oldest kept event, so the place is arithmetic.
    const events = this.events;
    const oldest = events[this.head];
    if (oldest === undefined || version >= this.version) return [];
    const start = this.head + Math.max(0, version + 1 - oldest.version);
    return events.slice(start);
  }

  private locked(tokens: ReadonlyMap<string, LockRequestState>): WatchedLock[] {
    const out: WatchedLock[] = [];
    if (this.prefixes.size === 0) return out;
    for (const req of tokens.values()) {
      if (req.status !== HELD || req.startTimestamp !== 0) continue;
      for (let i = 0; i < req.heldCount; i++) {
        const a = req.acquired[i];
        if (a !== undefined && this.matches(a.descriptor)) out.push({ descriptor: a.descriptor, mode: a.mode });
      }
    }
    return out.sort((x, y) => (x.descriptor < y.descriptor ? -1 : x.descriptor > y.descriptor ? 1 : 0));
  }

  private prefixesChanged(): void {
    this.everything = this.prefixes.has("");
    this.lengths = [...new Set([...this.prefixes.keys()].map((p) => p.length))].sort((a, b) => a - b);
    // Events logged so far were logged under the old set: nobody may take them as complete for the new one.
    this.version++;
    this.floor = this.version;
    this.events = [];
    this.head = 0;
    this.notify();
  }

  private notify(): void {
    if (this.listeners.size === 0) return;
    const listeners = [...this.listeners];
    this.listeners.clear();
    for (const listener of listeners) listener();
  }
}
