import { rowLock, type LockAcquiredResponse, type LockMode, type LockSpec } from "@leasehold/protocol";
import type { LockClient } from "../lock-client.js";
import { optionsThenFn } from "../options-then-fn.js";
import type { WithLockResult } from "../with-lock.js";

/** Options of {@link readLock} and {@link writeLock}. */
export interface DocumentLockOptions {
  /**
   * The table part of each document's descriptor (`rowLock(table, id)`). Default `"document"`.
   * Give each kind of document its own table so that order 7 and invoice 7 are different locks.
   */
  readonly table?: string | undefined;
  /**
   * How long to wait for the lock, in ms. Default 10,000: readers wait for a writer and writers
   * for readers, as `FOR SHARE`/`FOR UPDATE` do, but a wait that long means a holder is stuck, and
   * the `timeout` answer lets the caller decide instead of hanging. 0 tries once.
   */
  readonly acquireTimeoutMs?: number | undefined;
  /** Abandons the wait, and aborts the work's signal once it runs. Default: none. */
  readonly signal?: AbortSignal | undefined;
  /**
   * How long before a lease that is not being renewed would lapse the work's signal aborts.
   * Default: `withLock`'s (a fifth of the lease, at most 2 s).
   */
  readonly leaseMarginMs?: number | undefined;
}

/** What the work receives: a signal that aborts when the lock is lost, and the grant. */
export type DocumentWork<T> = (signal: AbortSignal, lock: LockAcquiredResponse) => Promise<T> | T;

/** The descriptor that stands for a whole document: the lock on its header row. */
export function documentDescriptor(id: string, table = "document"): string {
  return rowLock(table, id);
}

function specs(ids: string | readonly string[], mode: LockMode, table: string): LockSpec[] {
  const list = typeof ids === "string" ? [ids] : [...new Set(ids)];
  return list.map((id) => ({ descriptor: documentDescriptor(id, table), mode }));
}

async function run<T>(
  client: LockClient,
  ids: string | readonly string[],
  mode: LockMode,
  optionsOrFn: DocumentLockOptions | DocumentWork<T>,
  work: DocumentWork<T> | undefined,
): Promise<WithLockResult<T>> {
  const call = mode === "shared" ? "readLock" : "writeLock";
  const [options, fn] = optionsThenFn<DocumentLockOptions, DocumentWork<T>>(optionsOrFn, work, call);
  const { table = "document", acquireTimeoutMs = 10_000, signal, leaseMarginMs } = options;
  return client.withLock(specs(ids, mode, table), { acquireTimeoutMs, ...(signal && { signal }), ...(leaseMarginMs !== undefined && { leaseMarginMs }) }, fn);
}

/**
 * Read one document (or several) consistently: run `fn` under a **shared** lock on each document's
 * header, the `SELECT … FOR SHARE` of a header row. Readers run side by side; a writer waits for
 * them, and they for a writer, so `fn` never sees half an update made under {@link writeLock}.
 * Several ids are locked together (all or none, in one order), so two callers can never deadlock.
 * Resolves `{ status: "timeout" }` if the lock was not granted within `acquireTimeoutMs`.
 * Arguments go ids, options, work, as `withLock`'s; the options may be left out.
 *
 * It protects only against writers that also take {@link writeLock}: the store itself is not
 * locked. The lock can be lost while `fn` runs; `fn`'s signal says so.
 */
export function readLock<T>(client: LockClient, ids: string | readonly string[], fn: DocumentWork<T>): Promise<WithLockResult<T>>;
export function readLock<T>(client: LockClient, ids: string | readonly string[], options: DocumentLockOptions, fn: DocumentWork<T>): Promise<WithLockResult<T>>;
export function readLock<T>(
  client: LockClient,
  ids: string | readonly string[],
  optionsOrFn: DocumentLockOptions | DocumentWork<T>,
  fn?: DocumentWork<T>,
): Promise<WithLockResult<T>> {
  return run(client, ids, "shared", optionsOrFn, fn);
}

/**
 * Update one document (or several): run `fn` under an **exclusive** lock on each document's header,
 * the `SELECT … FOR UPDATE` of a header row taken before the first read of the update. No reader
 * or other writer of those documents runs meanwhile; queued writers are never starved by a stream
 * of readers (the server queues first in, first out). Resolves `{ status: "timeout" }` if not
 * granted within `acquireTimeoutMs`. Arguments go ids, options, work; the options may be left out.
 *
 * Unlike a database transaction nothing is rolled back if `fn` throws halfway: leave the document
 * consistent yourself. The lock can be lost while `fn` runs: stop when the signal aborts, and give
 * the store the fencing token (`lock.acquired[i].fencingToken`) if it can refuse stale writers.
 */
export function writeLock<T>(client: LockClient, ids: string | readonly string[], fn: DocumentWork<T>): Promise<WithLockResult<T>>;
export function writeLock<T>(client: LockClient, ids: string | readonly string[], options: DocumentLockOptions, fn: DocumentWork<T>): Promise<WithLockResult<T>>;
export function writeLock<T>(
  client: LockClient,
  ids: string | readonly string[],
  optionsOrFn: DocumentLockOptions | DocumentWork<T>,
  fn?: DocumentWork<T>,
): Promise<WithLockResult<T>> {
  return run(client, ids, "exclusive", optionsOrFn, fn);
}
