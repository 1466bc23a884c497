import type { LockResponse, NamespaceLocksResponse } from "@leasehold/protocol";
import type { LeaseLapse } from "./lease-lapse.js";
import type { PendingLock } from "./pending-lock.js";
import type { SettledOutcome } from "./lock-table.js";
import type { ServingGate } from "./serving-gate.js";
import type { TimestampReserver } from "./timestamp-reserver.js";
import type { TokenSource } from "./token-source.js";
import type { ReplicationSink } from "./replication-entries.js";

/**
 * The `validForMs` an engine answers with `leaseMs` and `validForMs` as given: `validForMs`, or
 * `floor(leaseMs / 2)` when undefined (the other half absorbs clock rates and the refresh round
 * trip). The cluster records it before a term serves, so it must be computed exactly as here.
 */
export function effectiveValidForMs(leaseMs: number, validForMs: number | undefined): number {
  return validForMs ?? Math.floor(leaseMs / 2);
}

/** Options of `LockEngine`; every field is optional. */
export interface LockEngineOptions {
  /** Monotonic clock in milliseconds. Default `performance.now()`; tests inject a fake one. */
  readonly clock?: (() => number) | undefined;
  /**
   * How long a token lives without a refresh. Default 10,000 ms (see `LockServiceOptions.leaseMs`).
   * It is the same for every token, which is what keeps the lease queue sorted for free.
   */
  readonly leaseMs?: number | undefined;
  /** `validForMs` of every lease answered. Default `floor(leaseMs / 2)`, leaving half as margin. */
  readonly validForMs?: number | undefined;
  /** Leader id put in every lease. Default: a random UUID, so leases of another engine say nothing. */
  readonly leaderId?: string | undefined;
  /** Where tokens come from. Default: 144 random bits each, from a pooled CSPRNG. */
  readonly tokenSource?: TokenSource | undefined;
  /** Durable bound of the counters. Default: none (counters start at 1 in every process). */
  readonly reserver?: TimestampReserver | undefined;
  /**
   * Called, synchronously, when a request that had to wait is granted, times out, or is failed by
   * `LockEngine.close`. Never called for an abandoned request (its caller is gone).
   * Default: nothing. The hook must not call back into the engine.
   */
  readonly onSettled?: ((pending: PendingLock, outcome: SettledOutcome) => void) | undefined;
  /**
   * Called, synchronously, for each token released because its lease lapsed, with how many
   * descriptors it held (0 for an immutable-timestamp lock) and who it was (fingerprint,
   * description, first descriptor, how long it was held). The token itself is never passed:
   * it is a secret and must not reach logs. Default: nothing.
   */
  readonly onLeaseLapse?: ((namespace: string, descriptorCount: number, lapse: LeaseLapse) => void) | undefined;
  /**
   * Most lock requests one namespace may have waiting. Default 100,000 (see
   * `LockServiceOptions.maxWaitingPerNamespace`). A request that would have to wait beyond it
   * throws `TOO_MANY_REQUESTS` before it touches any state.
   */
  readonly maxWaitingPerNamespace?: number | undefined;
  /**
   * Asked before every operation and every timer-driven catch-up: while it is closed nothing is
   * granted, refreshed or handed out, and operations throw its refusal. Default: none (always
   * open), as a single server needs; a cluster leader injects its leadership gate.
   */
  readonly gate?: ServingGate | undefined;
  /**
   * Start as a passive replica (a standby's copy of a leader's table): it refuses every request
   * (`UNAVAILABLE`), never lets time change it, and changes only through `restoreNamespace` and
   * `applyEntry` until `promote`. Default false: a table serves from the start.
   */
  readonly replica?: boolean | undefined;
  /**
   * Where every change of the table goes as replication entries (see `LockEngine.setReplicationSink`).
   * Default: none, which costs a null check per change and allocates nothing.
   */
  readonly replicationSink?: ReplicationSink | undefined;
}

/** A page being built in steps (see `LockEngine.inspectInSteps`). */
export interface InspectionJob {
  /** Walk at most about `budget` entries; true once the page is ready. */
  step(budget: number): boolean;
  /** The page. Throws `UNAVAILABLE` if the engine closed meanwhile. */
  finish(): NamespaceLocksResponse;
}

/** What `LockEngine.lock` answers: the final answer, or a handle when the request waits. */
export type LockAttempt = LockResponse | PendingLock;
