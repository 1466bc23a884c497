import { cellLock, rowLock, type LockWatchSince, type LockWatchUpdate } from "@leasehold/protocol";
import type { Cell, Version } from "./key-value-store.js";

/** Options of the read cache (`TransactionManager`'s `readCache`). */
export interface ReadCacheOptions {
  /**
   * The tables whose cells are cached. Each is watched as the descriptor prefix of its row and
   * cell locks (`rowLock(table, "")`), so every commit lock on it is an event the cache hears of.
   * A table must be declared with a conflict handler that takes commit locks (not `ignore-all`,
   * whose writers lock nothing, so the cache could never learn of their writes).
   */
  readonly prefixes: readonly string[];
  /**
   * Most memory the cached values may take, estimated as two bytes per character of table, row,
   * column and value plus 100 bytes per entry. Default 64 MiB. The least recently used go first.
   */
  readonly maxBytes?: number | undefined;
  /**
   * The fraction (0..1) of cache hits also read from the store and compared; a difference throws
   * {@link ReadCacheValidationError}. Default 0: validation doubles the cost of a hit, and is for
   * tests and for trying the cache on a new workload.
   */
  readonly validationRate?: number | undefined;
}

/** A cache answer that differs from the store's: a bug, never retried. */
export class ReadCacheValidationError extends Error {
  readonly code = "READ_CACHE_VALIDATION_FAILED";
  constructor(message: string) {
    super(message);
    this.name = "ReadCacheValidationError";
  }
}

/** Counters of a read cache. */
export interface ReadCacheStats {
  readonly hits: number;
  readonly misses: number;
  readonly validations: number;
  readonly entries: number;
  readonly bytes: number;
  /** Times the cache started over (a snapshot: a new log, a gap, or a change of the watched prefixes). */
  readonly resets: number;
}

/** What a transaction knows of the lock-event log: the update that came with its start timestamp. */
export interface CacheView {
  readonly logId: string;
  readonly version: number;
}

interface Entry {
  readonly version: Version | undefined;
  /** The log version as of the start of the transaction that read it. */
  readonly seenAt: number;
  readonly bytes: number;
}

/** Descriptors remembered before {@link ReadCache} forgets them all (and stops trusting older views). */
const REMEMBERED_DESCRIPTORS = 200_000;

/**
 * A read cache validated by lock watches (AtlasDB's lock-watch value cache). The rule: a cell read
 * by a transaction whose start came with log version `s` may be served to a transaction whose start
 * came with version `v` when no lock or unlock event on the cell's row or cell descriptor has a
 * version above `min(s, v)`, and the cell is not locked as of `v`. Committers hold the row or cell
 * lock of what they write from before their commit timestamp until after their commit point, so a
 * write that committed between the two start timestamps shows as such an event, or as a lock held
 * across one of them (docs/adr "read cache validity").
 *
 * The cache follows one log (`logId`) at a time, applying updates in version order. A snapshot
 * starts it over (it cannot tell what changed in the gap); so does a new `logId`, after which it
 * stays cold for `coldMs` (the lease a committer of the previous lock table may still be using).
 */
export class ReadCache {
  readonly #tables: ReadonlySet<string>;
  readonly #maxBytes: number;
  readonly #validationRate: number;
  readonly #prefixes: readonly string[];
  #logId: string | null = null;
  #version = 0;
  /** Log versions at or below this are not remembered per descriptor: treat every descriptor as touched then. */
  #forgotten = 0;
  #covered = false;
  #coldUntil = 0;
  readonly #lastEvent = new Map<string, number>();
  readonly #locked = new Map<string, number>();
  readonly #entries = new Map<string, Entry>();
  #bytes = 0;
  #hits = 0;
  #misses = 0;
  #validations = 0;
  #resets = 0;

  constructor(options: ReadCacheOptions) {
    const rate = options.validationRate ?? 0;
    if (!(rate >= 0 && rate <= 1)) throw new RangeError(`readCache.validationRate must be between 0 and 1 (got ${rate})`);
    const maxBytes = options.maxBytes ?? 64 * 1024 * 1024;
    if (!(maxBytes > 0)) throw new RangeError(`readCache.maxBytes must be positive (got ${maxBytes})`);
    if (options.prefixes.length === 0) throw new RangeError("readCache.prefixes must name at least one table");
    this.#tables = new Set(options.prefixes);
    this.#maxBytes = maxBytes;
    this.#validationRate = rate;
    this.#prefixes = [...this.#tables].map((table) => rowLock(table, ""));
  }

  /** The descriptor prefixes the cache needs watched. */
  get watchPrefixes(): readonly string[] {
    return this.#prefixes;
  }

  /** True when `table` is cached. */
  caches(table: string): boolean {
    return this.#tables.has(table);
  }

  /** Where the cache stands in the log, for the next `transactions/start`. */
  since(): LockWatchSince | null {
    return this.#logId === null ? null : { logId: this.#logId, version: this.#version };
  }

  /**
   * Take in an update (from a transaction start or a watcher). A snapshot of a new log is taken
   * only with `coldMs`, how long to stay cold (a transaction start knows its lease); `null` ignores it.
   */
  apply(update: LockWatchUpdate, now: number, coldMs: number | null): void {
    if (update.type === "snapshot") {
      if (update.logId === this.#logId && update.version <= this.#version) return;
      if (update.logId !== this.#logId) {
        if (coldMs === null) return;
        this.#coldUntil = now + coldMs;
      }
      this.#reset(update.logId, update.version);
      for (const l of update.locked) this.#locked.set(l.descriptor, (this.#locked.get(l.descriptor) ?? 0) + 1);
      this.#covered = this.#prefixes.every((p) => update.prefixes.some((w) => p.startsWith(w)));
      return;
    }
    if (update.logId !== this.#logId || update.version <= this.#version) return;
    for (const event of update.events) {
      if (event.version <= this.#version) continue;
      if (event.version !== this.#version + 1) {
        // A gap the server should never leave: trust nothing until the next snapshot.
        this.#reset(null, 0);
        return;
      }
      for (const d of event.descriptors) {
        this.#lastEvent.set(d.descriptor, event.version);
        const n = (this.#locked.get(d.descriptor) ?? 0) + (event.kind === "lock" ? 1 : -1);
        if (n > 0) this.#locked.set(d.descriptor, n);
        else this.#locked.delete(d.descriptor);
      }
      this.#version = event.version;
    }
    this.#version = update.version;
    if (this.#lastEvent.size > REMEMBERED_DESCRIPTORS) {
      this.#lastEvent.clear();
      this.#forgotten = this.#version;
      this.#clearEntries();
    }
  }

  /** The cached version of a cell for a transaction with `view`, or `undefined` on a miss. */
  get(table: string, cell: Cell, view: CacheView, now: number): { readonly version: Version | undefined } | undefined {
    if (!this.#usable(view, now)) return this.#miss();
    const key = keyOf(table, cell);
    const entry = this.#entries.get(key);
    if (entry === undefined) return this.#miss();
    const descriptors = descriptorsOf(table, cell);
    if (descriptors === null || !this.#quiet(descriptors, Math.min(entry.seenAt, view.version))) {
      // Touched after it was read: no later view can use it either.
      if (descriptors === null || !this.#quiet(descriptors, entry.seenAt)) this.#drop(key, entry);
      return this.#miss();
    }
    this.#entries.delete(key);
    this.#entries.set(key, entry); // most recently used last
    this.#hits++;
    return entry;
  }

  /** Remember what a transaction with `view` read, if the rule allows serving it later. */
  put(table: string, cell: Cell, version: Version | undefined, view: CacheView, now: number): void {
    if (!this.#usable(view, now)) return;
    const descriptors = descriptorsOf(table, cell);
    if (descriptors === null || !this.#quiet(descriptors, view.version)) return;
    const key = keyOf(table, cell);
    const old = this.#entries.get(key);
    if (old !== undefined) this.#drop(key, old);
    const bytes = 100 + 2 * (key.length + (version?.value?.length ?? 0));
    if (bytes > this.#maxBytes) return;
    this.#entries.set(key, { version, seenAt: view.version, bytes });
    this.#bytes += bytes;
    for (const [k, e] of this.#entries) {
      if (this.#bytes <= this.#maxBytes) break;
      this.#drop(k, e);
    }
  }

  /** True for the share of hits `validationRate` asks to check against the store. */
  shouldValidate(): boolean {
    if (this.#validationRate === 0 || Math.random() >= this.#validationRate) return false;
    this.#validations++;
    return true;
  }

  /** Counters. */
  stats(): ReadCacheStats {
    return { hits: this.#hits, misses: this.#misses, validations: this.#validations, entries: this.#entries.size, bytes: this.#bytes, resets: this.#resets };
  }

  /** No event on `descriptors` after `bound`, and none of them locked (as of any view at or above their last event). */
  #quiet(descriptors: readonly string[], bound: number): boolean {
    for (const d of descriptors) {
      if ((this.#lastEvent.get(d) ?? this.#forgotten) > bound) return false;
      if (this.#locked.has(d)) return false;
    }
    return true;
  }

  #usable(view: CacheView, now: number): boolean {
    return this.#covered && view.logId === this.#logId && now >= this.#coldUntil;
  }

  #reset(logId: string | null, version: number): void {
    this.#resets++;
    this.#logId = logId;
    this.#version = version;
    this.#forgotten = version;
    this.#covered = false;
    this.#lastEvent.clear();
    this.#locked.clear();
    this.#clearEntries();
  }

  #clearEntries(): void {
    this.#entries.clear();
    this.#bytes = 0;
  }

  #drop(key: string, entry: Entry): void {
    this.#entries.delete(key);
    this.#bytes -= entry.bytes;
  }

  #miss(): undefined {
    this.#misses++;
    return undefined;
  }
}

function keyOf(table: string, cell: Cell): string {
  return JSON.stringify([table, cell.row, cell.column]);
}

/** The commit-lock descriptors that cover a cell (row and cell locks), or null when they cannot be built. */
function descriptorsOf(table: string, cell: Cell): string[] | null {
  try {
    return [rowLock(table, cell.row), cellLock(table, cell.row, cell.column)];
  } catch {
    return null; // too long for a descriptor: such a cell is simply never cached
  }
}
