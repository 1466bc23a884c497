import type { LockMode, LockSpec } from "@leasehold/protocol";

/*
 * The engine's side of primary-backup replication (DESIGN.md "Locks that outlive their leader"):
 * what a leader's table tells a standby, as plain JSON-safe values. Entries describe OUTCOMES the
 * leader decided (this token was granted these holds with these fencing tokens; this waiter now
 * holds this and queues there), never requests, so a replica installs them without deciding
 * anything. Refreshes are not replicated: a promoted table restarts every lease at a full lease.
 *
 * Times: a replica's clock is not the leader's, so no absolute time crosses. Durations are whole
 * milliseconds counted back from (ages: `waitedMs`, `heldMs`) or forward from (`remainingMs`) the
 * moment the leader emitted the entry or exported the image; the replica counts them from the moment
 * it applies or restores it (so a waiter's deadline is, at most, the transit time later there).
 */

/** Version of the image and entry format; {@link NamespaceImage.format} carries it. */
export const REPLICATION_FORMAT = 1;

/** One descriptor a token (or a waiting request) holds. */
export interface ReplicatedHold {
  readonly descriptor: string;
  readonly mode: LockMode;
  /** The fencing token it was granted with (a value of the namespace's counter). */
  readonly fencingToken: number;
  /** The descriptor's live permit limit when the entry was made (permit holds only). */
  readonly limit?: number;
}

/** A granted lock request: the token exactly as its client holds it, and what it holds. */
export interface LockTokenImage {
  readonly kind: "lock";
  readonly token: string;
  /** Its holds in ascending descriptor order (as the grant answered them). */
  readonly holds: readonly ReplicatedHold[];
  /** True for all-or-none, false for as-many-as-possible. */
  readonly allOrNone: boolean;
  /** `max` of as-many-as-possible; the number of specs otherwise. */
  readonly max: number;
  /** The request's `requestId`, when it had one (a re-send with it answers this grant again). */
  readonly requestId?: string;
  /** The request's specs in ascending descriptor order; present exactly when `requestId` is (a re-send is matched against them). */
  readonly specs?: readonly LockSpec[];
  readonly clientDescription?: string;
  /** How long it waited before its grant, in whole milliseconds (0 when granted on arrival). */
  readonly waitedMs: number;
}

/** A started transaction's immutable-timestamp lock. */
export interface ImmutableLockImage {
  readonly kind: "immutable";
  readonly token: string;
  readonly startTimestamp: number;
}

/** A timestamp held under a lease name (`timestamp-leases`). */
export interface TimestampLeaseImage {
  readonly kind: "timestamp-lease";
  readonly token: string;
  readonly name: string;
  /** The timestamp held. */
  readonly leased: number;
  /** How many timestamps the request took after it (the request's `count`). */
  readonly count: number;
  readonly requestId?: string;
}

/** Any live token of a namespace. */
export type TokenImage = LockTokenImage | ImmutableLockImage | TimestampLeaseImage;

/** Where an all-or-none waiter queues: one descriptor, in one mode. */
export interface ReplicatedQueuePlace {
  readonly descriptor: string;
  readonly mode: LockMode;
  /** The descriptor's live permit limit (permit only). */
  readonly limit?: number;
}

/** A waiting request (a lock request or a `wait-for-locks`), in its current state. */
export interface WaiterImage {
  /**
   * The leader's wait serial: unique per leader table, ascending in arrival order (the watchers
   * view's cursor). It names the waiter in later entries, since `requestId` is optional.
   */
  readonly serial: number;
  readonly requestId?: string;
  /** Its specs in ascending descriptor order. */
  readonly specs: readonly LockSpec[];
  readonly allOrNone: boolean;
  readonly max: number;
  /** True for a `wait-for-locks` (it queues but never holds). */
  readonly waitOnly: boolean;
  readonly clientDescription?: string;
  /** Time left to its deadline, in whole milliseconds (never below 0). */
  readonly remainingMs: number;
  /** How long it has waited so far, in whole milliseconds. */
  readonly waitedMs: number;
  /** What an all-or-none request already holds (a prefix of its specs); empty otherwise. */
  readonly holds: readonly ReplicatedHold[];
  /** Index in `specs` of the next descriptor an all-or-none request needs. */
  readonly nextIndex: number;
  /** The descriptor it queues on (all-or-none only), if any. */
  readonly queuedOn?: ReplicatedQueuePlace;
  /** True while an as-many-as-possible request watches its descriptors. */
  readonly watching: boolean;
}

/** A token was granted (a lock, an immutable-timestamp lock or a timestamp lease). */
export type GrantEntry = TokenImage & {
  readonly type: "grant";
  /** The waiter serial the grant ends, when the lock request had waited (it leaves every queue). */
  readonly waiter?: number;
  /** The namespace's counter after the grant: the next number it would hand out. */
  readonly next: number;
};

/** Why a token ended. */
export type ReleaseReason = "unlock" | "lapse" | "revoke" | "unclaimed";

/** A live token ended: its holds are released. Waiters granted because of it follow as their own entries. */
export interface ReleaseEntry {
  readonly type: "release";
  readonly token: string;
  readonly reason: ReleaseReason;
}

/**
 * A request started waiting, or a waiting one changed (took a descriptor and queues on the next
 * one, or a re-send moved its deadline later): the whole new state, installed as it is.
 */
export type WaiterEntry = WaiterImage & {
  readonly type: "waiting";
  /** The namespace's counter after the change. */
  readonly next: number;
};

/** Why a waiter ended without a grant (`free`: a `wait-for-locks` passed every descriptor). */
export type WaiterEndReason = "timeout" | "abandon" | "revoke" | "free" | "unclaimed";

/** A waiter ended without a grant: it leaves every queue and releases what it held. */
export interface WaiterEndedEntry {
  readonly type: "waiter-ended";
  readonly serial: number;
  readonly reason: WaiterEndReason;
}

/**
 * A request set the live permit limit of a descriptor (on arrival, whatever its outcome): one per
 * permit spec of every lock request, changed or not, including a descriptor it brings into use
 * just for that or an idle one the table keeps.
 */
export interface LimitEntry {
  readonly type: "limit";
  readonly descriptor: string;
  readonly limit: number;
}

/**
 * The namespace's counter moved without a grant (timestamps handed out), so a promoted table never
 * hands out a number twice. (Across a change of leader the durable bound guarantees that too; this
 * keeps the replica's counter exactly the leader's.)
 */
export interface CounterEntry {
  readonly type: "counter";
  readonly next: number;
}

/**
 * Lock watches were registered (`lock-watches`, PROTOCOL.md "Lock watches"): the prefixes named,
 * each watched until `ttlMs` from now (a re-registration extends), and the namespace's lock-event
 * log as it stands after it, so a promoted table continues that log rather than starting one.
 */
export interface WatchEntry {
  readonly type: "watch";
  /** The namespace's log id (it stays while the table moves with the leadership). */
  readonly logId: string;
  /** The log's version after the registration. */
  readonly version: number;
  readonly prefixes: readonly string[];
  readonly ttlMs: number;
}

/** One change of a namespace's lock table, in the order the leader made them. */
export type ReplicationEntry = GrantEntry | ReleaseEntry | WaiterEntry | WaiterEndedEntry | LimitEntry | CounterEntry | WatchEntry;

/** A namespace's lock-event log in an image: its id, its version, and every watched prefix with the time it has left. */
export interface WatchImage {
  readonly logId: string;
  readonly version: number;
  /** Whole milliseconds left before each prefix lapses (0: lapsed, not dropped yet), counted like {@link WaiterImage.remainingMs}. */
  readonly prefixes: readonly { readonly prefix: string; readonly remainingMs: number }[];
}

/**
 * Receives every entry of every namespace, synchronously, in the order the state changed (per
 * namespace, and in fact across the engine). Entries are fresh objects the sink may keep. It must
 * not call back into the engine, and should not throw: the change has already happened.
 */
export type ReplicationSink = (namespace: string, entry: ReplicationEntry) => void;

/** A token in an image: its grant, plus how long it has been held. */
export type TokenImageAt = TokenImage & {
  /** Whole milliseconds since its grant when the image was taken. */
  readonly heldMs: number;
};

/** A whole namespace's lock table as plain JSON (see `LockEngine.exportNamespace`). */
export interface NamespaceImage {
  /** {@link REPLICATION_FORMAT}. */
  readonly format: number;
  readonly namespace: string;
  /** The namespace's counter: the next timestamp or fencing token it would hand out. */
  readonly next: number;
  /** Live tokens in grant order. */
  readonly tokens: readonly TokenImageAt[];
  /** Waiting requests by ascending serial. */
  readonly waiters: readonly WaiterImage[];
  /**
   * The exporting table's latest wait serial (across its namespaces): a table restored from the
   * image numbers its later waiters above it, as the leader would (the watchers view's cursor).
   */
  readonly waitSerial: number;
  /**
   * The live permit limit of every descriptor held as a permit or wanted as one by a waiter, by
   * descriptor: a request's limit applies on arrival, even to a descriptor held or queued on in
   * another mode, where no hold shows it. (Other descriptors' limits cannot decide anything: the
   * next permit request sets its own before it is decided.)
   */
  readonly limits: readonly { readonly descriptor: string; readonly limit: number }[];
  /** Every descriptor's queue, head first, as waiter serials (each queued waiter exactly once). */
  readonly queues: readonly { readonly descriptor: string; readonly serials: readonly number[] }[];
  /** The namespace's lock-event log, when it has one (something registered a watch). */
  readonly watch?: WatchImage;
}

/** Options of `LockEngine.promote`. */
export interface PromoteOptions {
  /**
   * How long the waiters a replica carried keep their place for a re-sent request with the same
   * `requestId` (which claims it). Default 2,000 ms (DESIGN.md: a client re-sends to the new
   * leader within that). Unclaimed ones are then dropped, and what was granted to them released.
   */
  readonly claimWindowMs?: number;
  /**
   * How long every carried lease lasts from the promotion. Default, and never less than, the
   * table's own `leaseMs`. A cluster passes the longest `validForMs` an earlier leader of the shard
   * answered plus a clock margin when that is longer (DESIGN.md "Carried leases"): members may run
   * with different `--lease-ms`, and a holder believes the promise its leader made.
   */
  readonly carriedLeaseMs?: number;
}

/** What a promotion carried over (for the promotion's log line). */
export interface PromoteSummary {
  readonly namespaces: number;
  /** Live tokens carried (locks, immutable-timestamp locks, timestamp leases). */
  readonly tokens: number;
  /** Waiters carried, each kept for the claim window. */
  readonly waiters: number;
  /** When the claim window ends, on the engine's clock. */
  readonly claimUntil: number;
}
