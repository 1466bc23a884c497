import { agePlaces, parseHeldBackPlaces, type HeldBackPlaces } from "../held-back-places.js";
import { RATE_TOLERANCE } from "../margins.js";
import type { ReplicaSink } from "./replica-store.js";

/**
 * What replication needs of a leader's lock table (the engine's `InMemoryLockService`): its change
 * feed and its export. Declared here, structurally, so the cluster side stays generic over the
 * engine's entry and image types (they travel as opaque JSON).
 */
export interface ReplicatedTable {
  /**
   * Every change of the table, synchronously and in order, as `(namespace, entry)`; `null` stops it.
   * Typed `never` so the engine's own sink type fits: callers pass a {@link ReplicationSinkFn}.
   */
  setReplicationSink(sink: never): void;
  /**
   * Every namespace's whole table as JSON, at one moment: whatever the export itself changes (a
   * serving table catching up reaps lapses) goes to the sink before any image is read, and nothing
   * after, so the images and the entries fed so far meet at one point (a standby's snapshot and
   * its log position, shard-replication.ts).
   */
  exportNamespaces(): Readonly<Record<string, unknown>>;
}

/** The sink a {@link ReplicatedTable} is given (entries are opaque here). */
export type ReplicationSinkFn = ((namespace: string, entry: unknown) => void) | null;

/** What a standby needs of a replica table (an `InMemoryLockService` started as a replica). */
export interface ReplicaTable {
  /** The namespaces the table holds (needed to promote it; a table without it never promotes). */
  namespaceNames?(): string[];
  /** A namespace's whole table as JSON (needed to promote it, like {@link namespaceNames}). */
  exportNamespace?(namespace: string): unknown;
  /** Install a namespace's image taken by `exportNamespace`. */
  restoreNamespace(namespace: string, image: never): void;
  /** Install one entry of the leader's change feed. */
  applyEntry(namespace: string, entry: never): void;
  /** Stop the table (its timers, its waiters). */
  close(): Promise<void>;
}

/** One entry of a shard's log: a namespace's engine entry. */
export interface ShardEntry {
  readonly ns: string;
  readonly entry: unknown;
}

/**
 * The hand-over entry (DESIGN.md "Hand-over with state"): appended by a leader handing a shard
 * over, after its gate closed, so the standby's acknowledgement of it is a fresh round trip that
 * proves the standby holds the whole table now (an earlier cumulative acknowledgement proves
 * nothing of a standby that died since). It changes nothing in the replica.
 */
export const HAND_OVER_ENTRY = { handOver: true } as const;

/**
 * The hand-over entry of a term that still holds requests back (its lease-wait's lines, outside the
 * engine, so no waiter entry ever told the standby of them): {@link HAND_OVER_ENTRY} with their
 * places in order, `heldBack`, which the taker keeps for their re-sent `requestId`s. Without any,
 * {@link HAND_OVER_ENTRY} itself.
 */
export function handOverEntry(heldBack: HeldBackPlaces): { readonly handOver: true; readonly heldBack?: HeldBackPlaces | undefined } {
  return Object.keys(heldBack).length === 0 ? HAND_OVER_ENTRY : { ...HAND_OVER_ENTRY, heldBack };
}

/** True for {@link HAND_OVER_ENTRY} (as it arrives, parsed from JSON). */
export function isHandOverEntry(entry: unknown): boolean {
  return isObject(entry) && entry.handOver === true && !("ns" in entry);
}

/** A shard's snapshot: every namespace's image. */
export interface ShardSnapshot {
  readonly namespaces: Readonly<Record<string, unknown>>;
  /**
   * How long the leader's lease-wait still held lock grants back when the snapshot was taken (ms;
   * absent or 0: over). A standby counts it again from when it restores the snapshot, so a table
   * promoted or handed over inside the wait waits out the rest (DESIGN.md "Failover without a
   * standby": an earlier leader's leases may still run).
   */
  readonly leaseWaitLeftMs?: number | undefined;
}

/**
 * The snapshot of every namespace of `table`, taken now (synchronously, at one moment: see
 * {@link ReplicatedTable.exportNamespaces}), with what is left of the term's lease-wait.
 */
export function snapshotShard(table: Pick<ReplicatedTable, "exportNamespaces">, leaseWaitLeftMs = 0): ShardSnapshot {
  const namespaces = table.exportNamespaces();
  return leaseWaitLeftMs > 0 ? { namespaces, leaseWaitLeftMs } : { namespaces };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * A standby's sink for one stream: a fresh replica table (made by `create`, with the leader's
 * `leaderId`) restored from the shard snapshot, then fed the shard's entries in order. The engine
 * checks each image and entry itself; this checks only the shard-level shape.
 */
export class ShardReplicaSink<T extends ReplicaTable> implements ReplicaSink {
  /** Until when (on {@link clock}) the leader's lease-wait may hold grants back, as the snapshot said. */
  private grantsFrom = -Infinity;
  /** The places the last hand-over entry carried, and when (on {@link clock}) it was applied; `null` when none or when the leader went on. */
  private heldBack: { readonly places: HeldBackPlaces; readonly at: number } | null = null;
  /** True while the last entry applied is a hand-over entry (see {@link handedOver}). */
  private handOverLast = false;

  constructor(
    readonly table: T,
    /** This process's monotonic clock (ms): the snapshot's remaining lease-wait is counted on it. Default `performance.now()`. */
    private readonly clock: () => number = () => performance.now(),
  ) {}

  restore(snapshot: unknown): void {
    if (!isObject(snapshot) || !isObject(snapshot.namespaces)) throw new Error("a shard snapshot must be { namespaces: { <namespace>: <image> } }");
    const left = snapshot.leaseWaitLeftMs;
    if (left !== undefined && (typeof left !== "number" || !Number.isFinite(left) || left < 0)) throw new Error("a shard snapshot's leaseWaitLeftMs must be a non-negative number");
    for (const [namespace, image] of Object.entries(snapshot.namespaces)) this.table.restoreNamespace(namespace, image as never);
    // Counted from now, after the leader took it: longer than the leader's own rest of the wait,
    // with the margin of a lease-wait for clocks running at different rates.
    if (left !== undefined && left > 0) this.grantsFrom = this.clock() + left + Math.ceil(left * RATE_TOLERANCE);
  }

  /** How long from now a table promoted from this replica must still hold lock grants back (0: the leader's lease-wait is over). */
  leaseWaitLeftMs(): number {
    return Math.max(0, this.grantsFrom - this.clock());
  }

  apply(entry: unknown): void {
    this.handOverLast = isHandOverEntry(entry);
    if (this.handOverLast) {
      const { heldBack } = entry as { heldBack?: unknown };
      this.heldBack = heldBack === undefined ? null : { places: parseHeldBackPlaces(heldBack), at: this.clock() };
      return;
    }
    // The leader appended again after a hand-over entry: it kept the shard (a balance move that did not happen).
    this.heldBack = null;
    if (!isObject(entry) || typeof entry.ns !== "string" || !("entry" in entry)) throw new Error("a shard entry must be { ns: <namespace>, entry: <entry> }");
    this.table.applyEntry(entry.ns, entry.entry as never);
  }

  /** True while the last entry applied is the leader's hand-over entry: it is giving the shard up (false once it appended again: it kept it). */
  handedOver(): boolean {
    return this.handOverLast;
  }

  /** The places the last hand-over entry carried, each deadline counted down since it was applied (none when the leader went on after it). */
  heldBackPlaces(): HeldBackPlaces {
    return this.heldBack === null ? {} : agePlaces(this.heldBack.places, this.clock() - this.heldBack.at);
  }

  /** The replica's table as it stands, every namespace's image (see {@link snapshotShard}). */
  snapshot(): ShardSnapshot {
    const { table } = this;
    if (table.namespaceNames === undefined || table.exportNamespace === undefined) throw new Error("this replica table cannot be exported, so it cannot be promoted");
    // A replica is read as it stands (nothing to catch up, nothing fed anywhere): one by one is one moment.
    return { namespaces: Object.fromEntries(table.namespaceNames().map((ns) => [ns, table.exportNamespace!(ns)])) };
  }

  /** The namespaces the replica's table holds (none when the table cannot list them). */
  namespaceNames(): string[] {
    return this.table.namespaceNames?.() ?? [];
  }

  dispose(): void {
    void this.table.close().catch(() => undefined);
  }
}
