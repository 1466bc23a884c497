import type { ActivityFeed } from "./activity-feed.js";
import type {
  LockBatchResultListener,
  LockCancelRequest,
  LockCancelResponse,
  LockResponse,
  LockService,
  LockWatchesResponse,
  LockWatchUpdate,
  NamespaceLocksQuery,
  NamespaceLocksResponse,
  NamespacesQuery,
  NamespacesResponse,
  NamespaceSummary,
  RevokeResponse,
  TimestampLeaseMinResponse,
  TimestampLeaseResponse,
  WaitForLocksResponse,
} from "@leasehold/protocol";
import type { Logger } from "pino";
import type { LockTableSnapshot, ServiceMetrics } from "../engine/engine-snapshots.js";
import type { ServingGate } from "../engine/serving-gate.js";
import type { ReplicationSink } from "../engine/replication-entries.js";
import type { TimestampReserver } from "../engine/timestamp-reserver.js";
import type { LockBatchRun } from "./run-lock-batch.js";

export type { DescriptorSnapshot, LockTableSnapshot, ServiceMetrics } from "../engine/engine-snapshots.js";

/** Options of {@link createLockService}; every field is optional. */
export interface LockServiceOptions {
  /**
   * How long a token lives without a refresh before the server releases it and grants its waiters.
   * Default 10,000 ms: long enough to ride out a client GC pause or a slow network, short enough
   * that a crashed holder blocks others for seconds, not minutes.
   */
  readonly leaseMs?: number | undefined;
  /**
   * The `validForMs` promised in every lease answer. Default `leaseMs / 2`: the other half absorbs
   * network delay and clock-rate drift between client and server, as AtlasDB's lease contract does.
   * Must be less than `leaseMs`.
   */
  readonly validForMs?: number | undefined;
  /**
   * Directory holding the durable timestamp bound (`timestamp-bound.json`). Default: none, and then
   * timestamps and fencing tokens restart from 1 with the process; give one in production so they
   * continue above every number handed out before a restart.
   */
  readonly dataDir?: string | undefined;
  /**
   * How far ahead of what it hands out the bound is persisted, per namespace. Default 1,000,000:
   * one small atomic file write per million timestamps keeps the disk off the hot path.
   */
  readonly timestampReserve?: number | undefined;
  /** Monotonic clock in milliseconds. Default `performance.now()`; tests inject a fake one. */
  readonly clock?: (() => number) | undefined;
  /**
   * Sets a timer on the same clock as {@link clock} and answers its cancel: the engine's deadline
   * timer and lock-event long polls use it. Default: Node's `setTimeout`, unref'd. The
   * deterministic simulator passes its own, so every timer of a simulated server fires in its
   * seeded order.
   */
  readonly setTimer?: ((fn: () => void, ms: number) => () => void) | undefined;
  /** Where warnings go (lease lapses, never the token itself). Default: a silent logger. */
  readonly logger?: Logger | undefined;
  /** The leader id of this process. Default: a fresh random UUID, new at every start. */
  readonly leaderId?: string | undefined;
  /** Version string reported by health. Default: this package's version. */
  readonly version?: string | undefined;
  /**
   * Most lock requests one namespace may have waiting at once. Default 100,000: far above any sane
   * workload (each waiter is a held-open request), low enough that one runaway client cannot grow
   * a namespace's queues without bound. A lock request that would have to wait while the namespace
   * is at the limit fails `TOO_MANY_REQUESTS` (429) with `details: { limit: "maxWaitingPerNamespace",
   * value }`, and nothing is queued or created for it; one that can be granted at once, one with
   * `acquireTimeoutMs` 0, and a retry of a request already waiting (same `requestId`) always pass.
   * Must be a positive integer.
   */
  readonly maxWaitingPerNamespace?: number | undefined;
  /**
   * Where the counters' durable bound comes from. Default: a file under `dataDir` when given, else
   * none (counters restart at 1). A cluster leader injects its PostgreSQL-backed reserver here.
   */
  readonly timestampReserver?: TimestampReserver | undefined;
  /**
   * Asked before every grant, refresh and timestamp (see the engine's `ServingGate`). Default:
   * none, always open, as a single server needs; a cluster leader injects its leadership gate.
   */
  readonly servingGate?: ServingGate | undefined;
  /**
   * Start as a passive replica of another table (a standby): every request is refused
   * `UNAVAILABLE` until `promote`; only `restoreNamespace` and `applyEntry` change it. Default
   * false. A replica must be given its leader's `leaderId`, so the tokens it carries stay valid.
   */
  readonly replica?: boolean | undefined;
  /**
   * Receives every change of the lock table as a replication entry, synchronously and in order
   * (see the engine's `ReplicationSink`). Default: none, which costs nothing per grant. Can be
   * changed later with `setReplicationSink`.
   */
  readonly replicationSink?: ReplicationSink | undefined;
  /**
   * How long a lock watch lasts without being registered again, in ms (PROTOCOL.md "Lock watches";
   * `--watch-ttl-ms`). Default 60,000: a follower re-registers well within it (the client at a
   * third of it), and a watch nobody follows any more stops costing the lock path a minute later.
   */
  readonly watchTtlMs?: number | undefined;
  /**
   * This server's id, answered by health as `serverId`. Default: the leader id, since a single
   * server process is one term of one leader.
   */
  readonly serverId?: string | undefined;
}

/** Who asked for a revoke, for its log line. */
export interface RevokeContext {
  /** The caller, for example its socket address. Default: not logged. */
  readonly client?: string | undefined;
}

/**
 * A lock request that could not be answered at once. `answer` settles with the engine's outcome
 * (`acquired`, `timeout`, or `UNAVAILABLE` at shutdown); `abandon()` gives the wait up: the caller's
 * `answer` rejects `CANCELLED`, and once every caller sharing the request (retries with the same
 * `requestId`) has abandoned it, it leaves every queue and releases what it had acquired.
 * Abandoning after the answer settled does nothing.
 */
export interface WaitingLock<T = LockResponse> {
  readonly answer: Promise<T>;
  abandon(): void;
}

/**
 * The embedded lock service: implements the protocol's {@link LockService} directly over the
 * in-memory lock table, plus what a host process needs to observe and stop it.
 */
export interface EmbeddedLockService extends LockService {
  /** The leader id of this process; every lease answered carries it. */
  readonly leaderId: string;
  /**
   * `lock` for hosts that track cancellation themselves: the answer at once when the engine has
   * one, otherwise a {@link WaitingLock}. Validation errors throw, as in `lock`.
   */
  beginLock(namespace: string, request: unknown): LockResponse | WaitingLock;
  /**
   * Run a lock batch: every entry is validated and run as its own `lock`, started in array order
   * (so FIFO on each descriptor is as if they were sent one after another), and reported to
   * `onResult` as `{ index, result }` or `{ index, error }` the moment it resolves. A bad entry
   * (schema, duplicate descriptors, `REQUEST_ID_CONFLICT`, waiting limit) is reported on its own
   * line and never fails the others. A malformed batch (`requests` missing, not an array, empty,
   * over 1,000 entries, unknown field) rejects `INVALID_ARGUMENT` before any entry runs. Aborting
   * `options.signal` abandons every unresolved entry (each reports `CANCELLED`). Resolves once
   * every entry has been reported; it never rejects after the first entry ran.
   */
  lockBatch(namespace: string, request: unknown, onResult: LockBatchResultListener, options?: { readonly signal?: AbortSignal | undefined }): Promise<void>;
  /**
   * {@link lockBatch} for hosts that must know, before anything is written, whether the batch as a
   * whole was refused: those checks throw synchronously and `onResult` has not been called; once
   * it returns, every entry is running. The returned run's `done` settles (never rejects) when all
   * reported, and its `abandon()` gives up every unresolved entry, as aborting `signal` (optional;
   * default none) does. A host that learns of a disconnect itself calls `abandon()` and needs no
   * signal, which is cheaper: most batches are answered before this returns.
   */
  beginLockBatch(namespace: string, request: unknown, onResult: LockBatchResultListener, signal?: AbortSignal): LockBatchRun;
  /**
   * Give up the lock request with `requestId` in the namespace (see `lock-cancel` in
   * docs/protocol.md): abandoned if waiting, released if granted; `{ cancelled: false }` otherwise.
   */
  cancelLock(namespace: string, request: LockCancelRequest | unknown, options?: { readonly signal?: AbortSignal | undefined }): Promise<LockCancelResponse>;
  /**
   * `wait-for-locks` (see docs/protocol.md): wait until each descriptor in turn could have been
   * granted, acquiring nothing; `{ status: "free" }` or `{ status: "timeout" }`. Aborting
   * `options.signal` abandons this caller's wait (`CANCELLED`). Validation errors reject.
   */
  waitForLocks(namespace: string, request: unknown, options?: { readonly signal?: AbortSignal | undefined }): Promise<WaitForLocksResponse>;
  /**
   * {@link waitForLocks} for hosts that track cancellation themselves, as {@link beginLock} is:
   * the answer at once when there is one, otherwise a {@link WaitingLock} of the wait's answer.
   */
  beginWaitForLocks(namespace: string, request: unknown): WaitForLocksResponse | WaitingLock<WaitForLocksResponse>;
  /** `timestamp-leases`: hold a fresh timestamp under a name with a token (see docs/protocol.md). */
  acquireTimestampLease(namespace: string, request: unknown, options?: { readonly signal?: AbortSignal | undefined }): Promise<TimestampLeaseResponse>;
  /** `timestamp-leases/min`: the smallest timestamp held under a name, or a fresh one. */
  minLeasedTimestamp(namespace: string, request: unknown, options?: { readonly signal?: AbortSignal | undefined }): Promise<TimestampLeaseMinResponse>;
  /** Watch descriptor prefixes in the namespace (a `lock-watches` body, validated here). */
  lockWatches(namespace: string, request: unknown, options?: { readonly signal?: AbortSignal | undefined }): Promise<LockWatchesResponse>;
  /**
   * The lock-event update after `since` (a `lock-events` body, validated here); with `waitMs`, an
   * answer without new events waits up to that long for one. Aborting `signal` ends the wait
   * (`CANCELLED`).
   */
  lockEvents(namespace: string, request: unknown, options?: { readonly signal?: AbortSignal | undefined }): Promise<LockWatchUpdate>;
  /** Current counters and gauges. */
  metrics(): ServiceMetrics;
  /**
   * Counts of the namespaces after `query.cursor`, ascending, at most `query.limit`, among those
   * `visible` accepts (default: every namespace; the HTTP layer passes what the caller's credential
   * may see). See docs/protocol.md "Inspection and revoke".
   */
  inspectNamespaces(query: NamespacesQuery, visible?: (namespace: string) => boolean): NamespacesResponse;
  /** Counts of every namespace, unordered (metrics read them at scrape time). */
  namespaceSummaries(): NamespaceSummary[];
  /**
   * One page of a namespace's holders and waiters; never creates the namespace. Rejects
   * `INVALID_ARGUMENT` for a bad namespace. A large namespace is walked in slices with the event
   * loop free in between, so the answer comes asynchronously.
   */
  inspectLocks(namespace: string, query: NamespaceLocksQuery): Promise<NamespaceLocksResponse>;
  /**
   * Release the holders named by fingerprint or by descriptor (a `revoke` body, validated here)
   * and log one warning saying what and why. The caller decides who may call it: the service
   * checks no credential. `context.client` (who asked, an address) goes to the log line.
   */
  revoke(namespace: string, request: unknown, context?: RevokeContext): Promise<RevokeResponse>;
  /** A picture of one namespace's lock table (an empty one for a namespace never used). */
  snapshot(namespace: string): LockTableSnapshot;
  /**
   * Recent lapses and revocations and per-second grants and waits, served as `GET /v1/events` for
   * the status page. Optional: a service without it answers that route 404.
   */
  readonly activity?: ActivityFeed | undefined;
  /**
   * Stop serving: every waiting lock request is answered `UNAVAILABLE` (503), new calls fail with
   * `UNAVAILABLE`, timers stop and the timestamp bound is persisted. Idempotent.
   */
  close(): Promise<void>;
}
