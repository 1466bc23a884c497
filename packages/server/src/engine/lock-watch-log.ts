import { LeaseholdError, LIMITS, type LockEvent, type LockWatchSince, type LockWatchUpdate, type WatchedLock } from "@leasehold/protocol";
import { imageOfPrefixes } from "./carried-watch.js";
import { modeName } from "./lock-mode-codes.js";
import type { WatchImage } from "./replication-entries.js";
import { HELD, type LockRequestState } from "./lock-request-state.js";

/**
 * Events a namespace's log keeps at least (PROTOCOL.md "Lock watches": "at least the last
 * 10,000"). A follower further behind gets a snapshot, which costs it one walk of the held locks.
 */
export const LOCK_EVENTS_KEPT = 10_000;

const LOCK = 0;
const UNLOCK = 1;
/** Wire modes by the engine's mode codes (`lock-mode-codes.ts`: exclusive 0, shared 1, permit 2). */
const MODES = ["exclusive", "shared", "permit"] as const;

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
 * The log lives as long as its namespace's lock table (`logId`): a table that starts empty starts
 * a new log, and a table that moves with the leadership takes its log along ({@link resumed}).
 */
export class LockWatchLog {
  /** The version of the newest event (or of the last change of the prefixes). */
  version = 0;
  /** The oldest version the log is whole from. */
  private floor = 0;
  /*
   * The kept events, a ring indexed by version modulo LOCK_EVENTS_KEPT, stored flat: a kind, and
   * for the common one-descriptor event its descriptor and a mode code; a list only for events
   * with several. Event objects are built when read. Keeping 10,000 events as objects (three per
   * event) made every grant allocate what then lived long enough to be promoted, which cost the
   * lock path about a fifth of its throughput with everything watched (measured, issue 22).
   */
  private readonly kinds = new Uint8Array(LOCK_EVENTS_KEPT);
  private readonly modes = new Uint8Array(LOCK_EVENTS_KEPT);
  private readonly entries: (string | WatchedLock[] | undefined)[] = new Array<string | WatchedLock[] | undefined>(LOCK_EVENTS_KEPT).fill(undefined);
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
   * The log `logId` continued by a promoted table: whole only from `version` on (it holds none of
   * the events before, so every follower gets a snapshot first), watching `prefixes` (prefix →
   * when it lapses) as they were. `version` must be above every version the log had before.
   */
  static resumed(logId: string, version: number, prefixes: ReadonlyMap<string, number>): LockWatchLog {
    const log = new LockWatchLog(logId);
    for (const [p, at] of prefixes) log.prefixes.set(p, at);
    log.nextExpiry = Math.min(Infinity, ...prefixes.values());
    log.prefixesChanged();
    log.version = log.floor = version;
    return log;
  }

  /** The log as a standby carries it (see `WatchImage`), at `now`; changes nothing. */
  image(now: number): WatchImage {
    return imageOfPrefixes(this.logId, this.version, this.prefixes, now);
  }

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
    this.append(LOCK, req, now);
  }

  /** A granted request's token ended (unlock, lapse, revoke): log its watched descriptors. */
  released(req: LockRequestState, now: number): void {
    this.append(UNLOCK, req, now);
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
    // A follower ahead of this log followed it at a leader that did not live to pass on all it
    // logged: move past its version, so its snapshot is newer than what it has and no event of
    // this table ever reuses a version it saw.
    if (since !== null && since.logId === this.logId && since.version > this.version) {
      this.version = this.floor = since.version + 1;
      this.entries.fill(undefined);
    }
    return { type: "snapshot", logId: this.logId, version: this.version, locked: this.locked(tokens), prefixes: this.watched() };
  }

  /** Call `listener` once, the next time the log changes. Returns a function that cancels it. */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private append(kind: number, req: LockRequestState, now: number): void {
    if (now >= this.nextExpiry) this.expire(now);
    if (this.prefixes.size === 0) return;
    // Called while the request still holds its descriptors, so each one's holder mode is its own.
    const n = req.heldCount;
    let entry: string | WatchedLock[];
    let mode = 0;
    if (n === 1) {
      const d = req.heldAt(0);
      if (!this.matches(d.key)) return;
      entry = d.key;
      mode = d.holderMode;
    } else {
      const list: WatchedLock[] = [];
      for (let i = 0; i < n; i++) {
        const d = req.heldAt(i);
        if (this.matches(d.key)) list.push({ descriptor: d.key, mode: modeName(d.holderMode) });
      }
      if (list.length === 0) return;
      entry = list;
    }
    const version = ++this.version;
    const at = version % LOCK_EVENTS_KEPT;
    this.kinds[at] = kind;
    this.modes[at] = mode;
    this.entries[at] = entry;
    if (version - this.floor > LOCK_EVENTS_KEPT) this.floor = version - LOCK_EVENTS_KEPT;
    if (this.listeners.size > 0) this.notify();
  }

  private eventsAfter(since: number): LockEvent[] {
    const out: LockEvent[] = [];
    for (let version = since + 1; version <= this.version; version++) {
      const at = version % LOCK_EVENTS_KEPT;
      const entry = this.entries[at] as string | WatchedLock[];
      const descriptors = typeof entry === "string" ? [{ descriptor: entry, mode: MODES[this.modes[at] as number] as WatchedLock["mode"] }] : entry;
      out.push({ version, kind: this.kinds[at] === LOCK ? "lock" : "unlock", descriptors });
    }
    return out;
  }

  private locked(tokens: ReadonlyMap<string, LockRequestState>): WatchedLock[] {
    const out: WatchedLock[] = [];
    if (this.prefixes.size === 0) return out;
    for (const req of tokens.values()) {
      if (req.status !== HELD || req.startTimestamp !== 0) continue;
      for (let i = 0; i < req.heldCount; i++) {
        const d = req.heldAt(i);
        if (this.matches(d.key)) out.push({ descriptor: d.key, mode: modeName(d.holderMode) });
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
    this.entries.fill(undefined); // unreachable below the floor: let them go
    this.notify();
  }

  private notify(): void {
    if (this.listeners.size === 0) return;
    const listeners = [...this.listeners];
    this.listeners.clear();
    for (const listener of listeners) listener();
  }
}
