import { LIMITS } from "@leasehold/protocol";
import type { ShapeCheck } from "./replica-checks.js";
import type { WatchImage } from "./replication-entries.js";

/**
 * How far above the version a standby accounted for a promoted table resumes a carried lock-event
 * log (2^24). The standby counts every entry that could have moved the leader's version, but a
 * leader answers a follower before the standby heard of what it answered: releases and lapses are
 * sent without waiting (DESIGN.md), prefixes lapse on the leader's clock, and a registration
 * travels lazily. Versions of those a follower may have seen are far fewer than this: a standby
 * further behind than a third of a leader lease is recorded not in sync and never promoted, and
 * no leader logs 16 million events in that time. Versions stay below 2^53 for 2^29 promotions.
 */
export const CARRIED_WATCH_GAP = 2 ** 24;

/**
 * A replica's account of a namespace's lock-event log at its leader (lock-watch-log.ts): the log
 * id, a version at or above the leader's (short only of what the leader did not send yet), and the
 * watched prefixes with when they lapse on this table's clock. A promotion resumes the log from
 * it ({@link CARRIED_WATCH_GAP} above the version), so the log id changes only when a table
 * starts empty (PROTOCOL.md "Lock watches") and watches last until `--watch-ttl-ms`.
 */
export class CarriedWatch {
  constructor(
    public logId: string,
    public version: number,
    /** Prefix → when it lapses, on the replica's clock. */
    readonly prefixes: Map<string, number>,
  ) {}

  /** A grant or a release applied: at most one event at the leader. */
  noteEvent(): void {
    this.version++;
  }

  /**
   * A registration applied (its entry, already checked). Each prefix named may later lapse at the
   * leader, moving its version once more without an entry: counted now.
   */
  register(logId: string, version: number, prefixes: readonly string[], ttlMs: number, now: number): void {
    this.logId = logId;
    this.version = Math.max(this.version, version) + prefixes.length;
    for (const p of prefixes) this.prefixes.set(p, now + ttlMs);
  }

  /** As an image's `watch` (see `WatchImage`), at `now`. */
  image(now: number): WatchImage {
    return imageOfPrefixes(this.logId, this.version, this.prefixes, now);
  }
}

/** A watch image of a log: `prefixes` map each prefix to when it lapses. */
export function imageOfPrefixes(logId: string, version: number, prefixes: ReadonlyMap<string, number>, now: number): WatchImage {
  const list = [...prefixes].map(([prefix, at]) => ({ prefix, remainingMs: Math.max(0, Math.ceil(at - now)) }));
  return { logId, version, prefixes: list.sort((a, b) => (a.prefix < b.prefix ? -1 : a.prefix > b.prefix ? 1 : 0)) };
}

/** A prefix as registrations allow it (possibly empty: it watches everything). */
function checkPrefix(check: ShapeCheck, value: unknown, path: string): string {
  if (typeof value !== "string" || value.length > 1024) check.fail(path, "must be a string of at most 1024 characters");
  return value;
}

/** The carried log of an image's `watch` (checked first, see restore-namespace.ts), restored at `now`; each prefix lapsing may still move the leader's version once. */
export function carriedFromImage(check: ShapeCheck, raw: unknown, now: number): CarriedWatch {
  const w = check.object(raw, "image.watch");
  const logId = check.string(w.logId, "image.watch.logId");
  const version = check.integer(w.version, "image.watch.version");
  const list = check.array(w.prefixes, "image.watch.prefixes");
  if (list.length > LIMITS.maxWatchPrefixesPerNamespace) check.fail("image.watch.prefixes", `must hold at most ${LIMITS.maxWatchPrefixesPerNamespace} prefixes`);
  const prefixes = new Map<string, number>();
  list.forEach((rawPrefix, i) => {
    const p = check.object(rawPrefix, `image.watch.prefixes[${i}]`);
    const prefix = checkPrefix(check, p.prefix, `image.watch.prefixes[${i}].prefix`);
    if (prefixes.has(prefix)) check.fail(`image.watch.prefixes[${i}].prefix`, "repeats a prefix");
    prefixes.set(prefix, now + check.integer(p.remainingMs, `image.watch.prefixes[${i}].remainingMs`));
  });
  return new CarriedWatch(logId, version + prefixes.size, prefixes);
}

/** A `watch` entry's fields, checked (see `WatchEntry`). */
export function checkWatchEntry(check: ShapeCheck, e: Record<string, unknown>): { logId: string; version: number; prefixes: readonly string[]; ttlMs: number } {
  const logId = check.string(e.logId, "entry.logId");
  const version = check.integer(e.version, "entry.version");
  const list = check.array(e.prefixes, "entry.prefixes");
  if (list.length > LIMITS.maxWatchPrefixesPerRequest) check.fail("entry.prefixes", `must hold at most ${LIMITS.maxWatchPrefixesPerRequest} prefixes`);
  const prefixes = list.map((p, i) => checkPrefix(check, p, `entry.prefixes[${i}]`));
  return { logId, version, prefixes, ttlMs: check.integer(e.ttlMs, "entry.ttlMs", 1) };
}
