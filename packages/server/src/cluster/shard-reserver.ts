import { LeaseholdError } from "@leasehold/protocol";
import type { TimestampReserver } from "../engine/timestamp-reserver.js";
import { unavailable } from "./cluster-errors.js";
import type { Coordinator, HeldTerm, LoadedBound, StoredBound } from "./coordinator.js";

/** A namespace's bound as this term knows it. */
interface NamespaceBound {
  /** The stored bound read when the term first used the namespace: its counter resumes above it. */
  readonly floor: number;
  /** The highest bound known to be stored under this term's epoch. */
  durable: number;
  /** The immutable timestamp an earlier leader recorded (or `floor + 1`): the cap during the lease-wait. */
  readonly cap: number;
  /** An extension in flight, so at most one per namespace runs at a time. */
  extending: Promise<void> | null;
}

/** What {@link ShardReserver} reports to its term. */
export interface ShardReserverHooks {
  /** A compare-and-set found another epoch's bound: this term is over. */
  readonly onDeposed: (reason: string) => void;
  /** A bound extension matched (for the metric). */
  readonly onExtended: () => void;
  /** An extension failed with an unknown outcome (logged by the term). */
  readonly onError: (namespace: string, err: unknown) => void;
  /**
   * A namespace's bound was loaded: its counter must resume above `floor` (a table that carried the
   * namespace from a replica holds a lower counter). Default: nothing.
   */
  readonly onLoaded?: ((namespace: string, floor: number) => void) | undefined;
}

/**
 * The timestamp reserver of one shard term in a cluster: bounds live in the coordinator, reserved
 * ahead in blocks and extended by one statement fenced by the term's epoch. The engine calls
 * {@link reserve} synchronously, so extensions run in the background ahead of need: the engine is
 * handed at most half a block at a time, and each hand-out past the half-way mark starts the next
 * extension. Only numbers at or below a bound *known* to be stored are handed out; a failed
 * statement (outcome unknown) changes nothing here, and the next compare-and-set re-reads the row.
 */
export class ShardReserver implements TimestampReserver {
  private readonly bounds = new Map<string, NamespaceBound>();
  private readonly preparing = new Map<string, Promise<void>>();
  private ended = false;

  constructor(
    private readonly coordinator: Coordinator,
    private readonly term: HeldTerm,
    private readonly block: number,
    private readonly hooks: ShardReserverHooks,
  ) {}

  /** True once {@link prepare} has finished for the namespace. */
  isPrepared(namespace: string): boolean {
    return this.bounds.has(namespace);
  }

  /** The immutable-timestamp cap of a prepared namespace during the lease-wait. */
  cap(namespace: string): number {
    return this.bounds.get(namespace)?.cap ?? 1;
  }

  /** Namespaces this term has prepared. */
  namespaces(): IterableIterator<string> {
    return this.bounds.keys();
  }

  /**
   * Read the namespace's stored bound and extend it under this term's epoch, recording the
   * immutable-timestamp floor of this term in the same statement. Single-flight per namespace.
   */
  prepare(namespace: string): Promise<void> {
    if (this.bounds.has(namespace)) return Promise.resolve();
    let pending = this.preparing.get(namespace);
    if (pending === undefined) {
      pending = this.load(namespace).finally(() => this.preparing.delete(namespace));
      this.preparing.set(namespace, pending);
    }
    return pending;
  }

  /**
   * {@link prepare} many namespaces at once (a term taking over a table that carries them): one
   * statement reads and extends every bound not yet loaded ({@link Coordinator.loadBounds}); a
   * namespace it did not extend (a fence that matched nothing, a later epoch's row, a concurrent
   * insert) and every namespace when it failed (outcome unknown) is then loaded on its own as by
   * {@link prepare}, whose re-reads tell a deposed term from a lost answer. Resolves per namespace
   * as {@link prepare} does: one promise each, in the order given.
   */
  prepareAll(namespaces: readonly string[]): Promise<void>[] {
    const wanted = [...new Set(namespaces)].filter((n) => !this.bounds.has(n) && !this.preparing.has(n));
    const batch = wanted.length === 0 || this.ended ? null : this.coordinator.loadBounds(this.term, wanted, this.block);
    if (batch !== null) {
      for (const namespace of wanted) {
        const pending = batch
          .then(
            (rows) => rows.find((r) => r.namespace === namespace),
            (err: unknown) => {
              this.hooks.onError(namespace, err);
              return undefined;
            },
          )
          .then((row) => (row === undefined ? this.load(namespace) : this.loadedBatch(row)))
          .finally(() => this.preparing.delete(namespace));
        this.preparing.set(namespace, pending);
      }
    }
    return namespaces.map((n) => this.prepare(n));
  }

  /**
   * Bounds already loaded under this term's epoch by the statement that started it (an adoption
   * that loaded the carried namespaces' bounds, `Coordinator.adoptHandOver`): each is prepared as
   * if {@link prepare} had loaded it. Call once the table holds the namespaces (their counters are
   * raised above the floors).
   */
  seed(rows: readonly LoadedBound[]): void {
    for (const row of rows) if (!this.bounds.has(row.namespace) && !this.preparing.has(row.namespace)) this.loadedBatch(row);
  }

  floor(namespace: string): number {
    return this.bounds.get(namespace)?.floor ?? 0;
  }

  reserve(namespace: string, upTo: number): number {
    const state = this.bounds.get(namespace);
    if (state === undefined || this.ended) throw unavailable(`the timestamp bound of namespace ${JSON.stringify(namespace)} is not loaded on this leader`, 100);
    if (upTo > Number.MAX_SAFE_INTEGER) throw new LeaseholdError("UNAVAILABLE", `namespace ${namespace} has used every safe integer timestamp`);
    // Every number at or below the floor may have been handed out by an earlier leader (or the
    // imported single server): a counter asking for one started below it (a floor cached before
    // the bound was loaded). Refuse, whatever path got here, rather than repeat a timestamp: a bug,
    // so INTERNAL (500), not a 503 a client would retry into the same refusal.
    if (upTo <= state.floor) {
      throw new LeaseholdError("INTERNAL", `refused to hand out timestamps up to ${upTo} in namespace ${JSON.stringify(namespace)}: numbers up to ${state.floor} may already have been handed out`);
    }
    const half = Math.max(1, Math.floor(this.block / 2));
    if (upTo > state.durable || state.durable - upTo < half) this.extend(namespace, state, upTo);
    if (upTo > state.durable) {
      throw unavailable(`the timestamp bound of namespace ${JSON.stringify(namespace)} is being extended in PostgreSQL; retry shortly`, 50);
    }
    return Math.min(state.durable, upTo + half);
  }

  persist(): void {
    // Every bound handed out is already stored: nothing to write at close.
  }

  /** Stop extending (the term is over). */
  end(): void {
    this.ended = true;
  }

  private async load(namespace: string): Promise<void> {
    let first: StoredBound | null = null;
    /** The row as read before an extension that matched nothing, or `null`. */
    let unmatched: StoredBound | null = null;
    for (let attempt = 0; attempt < 3 && !this.ended; attempt++) {
      const stored = await this.coordinator.readBound(namespace);
      if (stored.epoch > this.term.epoch) return this.deposed(namespace, stored.epoch);
      // An earlier attempt of ours landed although its answer was lost: adopt what it stored.
      if (first !== null && stored.epoch === this.term.epoch) return this.loaded(namespace, first, stored.bound);
      // The compare-and-set matched nothing on a row that has not moved since: the epoch fence
      // failed, this term is over.
      if (unmatched !== null && unmatched.bound === stored.bound && unmatched.epoch === stored.epoch) return this.fenced(namespace);
      first = stored;
      unmatched = null;
      const to = Math.min(Number.MAX_SAFE_INTEGER, stored.bound + this.block);
      let ok: boolean;
      try {
        ok = await this.coordinator.extendBound(namespace, this.term, stored.bound, to, stored.bound + 1);
      } catch (err) {
        this.hooks.onError(namespace, err);
        continue; // unknown outcome: read again before anything is served
      }
      if (ok) return this.loaded(namespace, stored, to);
      // Matched nothing although the bound was just read: either the epoch fence failed, or an
      // earlier attempt of ours whose answer was lost committed after that read (its statement
      // outlived its timeout). Re-read, never guess: the next round adopts our own extension, or
      // steps down when the row has not moved.
      unmatched = stored;
    }
    if (!this.ended) throw unavailable(`could not load the timestamp bound of namespace ${JSON.stringify(namespace)} from PostgreSQL; retry shortly`, 200);
  }

  /** A namespace {@link Coordinator.loadBounds} extended under this term's epoch. */
  private loadedBatch(row: LoadedBound): void {
    this.loaded(row.namespace, { bound: row.floor, immutable: row.immutable, epoch: this.term.epoch }, row.to);
  }

  private fenced(namespace: string): void {
    this.hooks.onDeposed(`the bound extension of namespace ${JSON.stringify(namespace)} matched nothing: epoch ${this.term.epoch} no longer leads shard ${this.term.shard}`);
  }

  private loaded(namespace: string, stored: StoredBound, durable: number): void {
    this.hooks.onExtended();
    if (this.ended) return;
    this.bounds.set(namespace, { floor: stored.bound, durable, cap: stored.immutable ?? stored.bound + 1, extending: null });
    this.hooks.onLoaded?.(namespace, stored.bound);
  }

  private extend(namespace: string, state: NamespaceBound, upTo: number): void {
    if (state.extending !== null || this.ended) return;
    const from = state.durable;
    const to = Math.min(Number.MAX_SAFE_INTEGER, Math.max(upTo, from) + this.block);
    state.extending = this.coordinator
      .extendBound(namespace, this.term, from, to)
      .then(async (ok) => {
        if (ok) {
          state.durable = Math.max(state.durable, to);
          this.hooks.onExtended();
          return;
        }
        // Matched nothing: an earlier attempt of ours may have landed (its answer lost), or
        // another epoch moved the bound. Re-read; never guess.
        const stored = await this.coordinator.readBound(namespace);
        if (stored.epoch === this.term.epoch && stored.bound > from) state.durable = Math.max(state.durable, stored.bound);
        else if (stored.epoch !== this.term.epoch) this.deposed(namespace, stored.epoch);
        else this.fenced(namespace);
      })
      .catch((err: unknown) => this.hooks.onError(namespace, err))
      .finally(() => {
        state.extending = null;
      });
  }

  private deposed(namespace: string, epoch: number): void {
    this.hooks.onDeposed(`the bound of namespace ${JSON.stringify(namespace)} was extended by epoch ${epoch}, not this term's ${this.term.epoch}`);
  }
}
