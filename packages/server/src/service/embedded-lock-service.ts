import type { LockBatchResultListener, LockCancelRequest, LockCancelResponse, LockMode, LockResponse, LockService } from "@leasehold/protocol";
import type { Logger } from "pino";
import type { LockBatchRun } from "./run-lock-batch.js";

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
}

/** Counters and gauges the service keeps; the HTTP layer renders them at `GET /metrics`. */
export interface ServiceMetrics {
  /** Namespaces created so far. */
  readonly namespaces: number;
  /** Held (descriptor, token) pairs, immutable-timestamp locks excluded. */
  readonly heldLocks: number;
  /** Live tokens: granted lock requests plus immutable-timestamp locks. */
  readonly heldTokens: number;
  /** Lock requests waiting now. */
  readonly waitingRequests: number;
  /** Descriptor grants since start. */
  readonly grantsTotal: number;
  /** Lock requests answered `timeout` since start. */
  readonly timeoutsTotal: number;
  /** Tokens released because their lease lapsed, since start. */
  readonly leaseLapsesTotal: number;
  /** Tokens released by unlock since start. */
  readonly unlocksTotal: number;
  /** Waiting requests abandoned (client gone or aborted) since start. */
  readonly abandonedTotal: number;
}

/** One held or waiting entry of a descriptor, for snapshots. */
export interface DescriptorSnapshot {
  readonly descriptor: string;
  /** Current permit limit (permit mode only). */
  readonly limit?: number | undefined;
  readonly holders: readonly { readonly mode: LockMode; readonly fencingToken: number }[];
  /** Waiting requests in queue order. */
  readonly queue: readonly { readonly mode: LockMode }[];
}

/**
 * A deterministic picture of one namespace's lock table, with no tokens in it. Tests compare one
 * taken before bad input with one taken after, to prove the input changed nothing.
 */
export interface LockTableSnapshot {
  /** Descriptors with holders or waiters, sorted by descriptor. */
  readonly descriptors: readonly DescriptorSnapshot[];
  readonly heldTokens: number;
  readonly waitingRequests: number;
  /** Start timestamps of held immutable-timestamp locks, ascending. */
  readonly immutableLocks: readonly number[];
  /** The next number the namespace's counter would hand out. */
  readonly nextTimestamp: number;
}

/**
 * A lock request that could not be answered at once. `answer` settles with the engine's outcome
 * (`acquired`, `timeout`, or `UNAVAILABLE` at shutdown); `abandon()` gives the wait up: the caller's
 * `answer` rejects `CANCELLED`, and once every caller sharing the request (retries with the same
 * `requestId`) has abandoned it, it leaves every queue and releases what it had acquired.
 * Abandoning after the answer settled does nothing.
 */
export interface WaitingLock {
  readonly answer: Promise<LockResponse>;
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
  /** Current counters and gauges. */
  metrics(): ServiceMetrics;
  /** A picture of one namespace's lock table (an empty one for a namespace never used). */
  snapshot(namespace: string): LockTableSnapshot;
  /**
   * Stop serving: every waiting lock request is answered `UNAVAILABLE` (503), new calls fail with
   * `UNAVAILABLE`, timers stop and the timestamp bound is persisted. Idempotent.
   */
  close(): Promise<void>;
}
