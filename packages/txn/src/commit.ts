import type { LockClient } from "@leasehold/client";
import { cellLock, rowLock } from "@leasehold/protocol";
import { conflictPolicy } from "./conflict-handler.js";
import type { KeyValueStore } from "./key-value-store.js";
import type { SnapshotReader } from "./snapshot-reader.js";
import type { Transaction } from "./transaction.js";
import { TransactionConflictError, TransactionLocksLostError, TransactionLockTimeoutError } from "./transaction-errors.js";
import { transactionRowLock, type TransactionsTable } from "./transactions-table.js";
import type { UnlockMode } from "./unlock-mode.js";

/** Everything the commit path uses; supplied by `TransactionManager`. */
export interface CommitDeps {
  readonly client: LockClient;
  readonly store: KeyValueStore;
  readonly transactions: TransactionsTable;
  readonly reader: SnapshotReader;
  readonly unlockMode: UnlockMode;
  readonly lockAcquireTimeoutMs: number;
}

/** The commit locks: what the handlers ask for, plus the transaction's own row, sorted and unique. */
function commitDescriptors(txn: Transaction): string[] {
  const descriptors = new Set<string>([transactionRowLock(txn.startTimestamp)]);
  for (const w of txn.writes()) {
    const { lock } = conflictPolicy(txn.handler(w.table));
    if (lock === "row") descriptors.add(rowLock(w.table, w.cell.row));
    else if (lock === "cell") descriptors.add(cellLock(w.table, w.cell.row, w.cell.column));
  }
  return [...descriptors].sort();
}

/**
 * Commit `txn`, whose immutable-timestamp lock is `immutableToken`. Resolves once committed (the
 * transactions-table entry is written); throws a `TransactionError` when it did not commit.
 * Either way every lock is released: with `tryUnlock`, except a successful commit in `sync` mode.
 *
 * 1. read-only: check the immutable-timestamp lease (its reads were protected from sweep only
 *    while it held), release, done;
 * 2. lock the commit descriptors and the transaction's own row, in one all-or-none request;
 * 3. write-write check of every written cell whose handler asks for it;
 * 4. write the versions at the start timestamp;
 * 5. take a commit timestamp;
 * 6. read-write check (serializable tables): every snapshot read still sees the same version;
 * 7. check both tokens are still held by their leases (local, no call);
 * 8. `putUnlessExists(start → commit)`: the commit point;
 * 9. release the commit locks and the immutable-timestamp lock.
 */
export async function commitTransaction(deps: CommitDeps, txn: Transaction, immutableToken: string): Promise<void> {
  const { client } = deps;
  const writes = txn.writes();
  if (writes.length === 0) {
    if (!client.isHeld(immutableToken)) {
      client.tryUnlock([immutableToken]);
      throw new TransactionLocksLostError("the immutable-timestamp lock lapsed during a read-only transaction: sweep may have removed what it read");
    }
    await release(deps, [], immutableToken);
    return;
  }
  const locked = await client.lock(
    commitDescriptors(txn).map((descriptor) => ({ descriptor, mode: "exclusive" as const })),
    { acquireTimeoutMs: deps.lockAcquireTimeoutMs },
  );
  if (locked.status !== "acquired") {
    client.tryUnlock([immutableToken]);
    throw new TransactionLockTimeoutError(`the commit locks were not granted within ${deps.lockAcquireTimeoutMs} ms`);
  }
  const commitToken = locked.token;
  let wroteVersions = false;
  try {
    await checkWriteWrite(deps, txn);
    wroteVersions = true;
    await Promise.all(writes.map((w) => deps.store.put(w.table, w.cell, txn.startTimestamp, w.value)));
    const commitTimestamp = await client.freshTimestamp();
    await checkReadWrite(deps, txn, commitTimestamp);
    if (!client.isHeld(immutableToken) || !client.isHeld(commitToken)) {
      throw new TransactionLocksLostError("a lease of the transaction's locks ran out before the commit point; nothing was committed");
    }
    if (!(await deps.transactions.commit(txn.startTimestamp, commitTimestamp))) {
      throw new TransactionConflictError("rolled-back", "", undefined, "another transaction rolled this one back while it was committing");
    }
  } catch (err) {
    if (wroteVersions && (await abandon(deps, txn))) {
      // putUnlessExists failed in transit yet landed: the transaction did commit.
      client.tryUnlock([commitToken, immutableToken]);
      return;
    }
    client.tryUnlock([commitToken, immutableToken]);
    throw err;
  }
  await release(deps, [commitToken], immutableToken);
}

async function checkWriteWrite(deps: CommitDeps, txn: Transaction): Promise<void> {
  for (const w of txn.writes()) {
    if (!conflictPolicy(txn.handler(w.table)).writeWrite) continue;
    // The newest version by anyone else decides: committed after we started means a lost update.
    let before = Number.POSITIVE_INFINITY;
    for (;;) {
      const version = await deps.store.latestBefore(w.table, w.cell, before);
      if (version === undefined) break;
      before = version.timestamp;
      if (version.timestamp === txn.startTimestamp) continue;
      const status = await deps.reader.status(version.timestamp, "wait");
      if (status.state === "aborted") continue;
      if (status.state === "committed" && status.commitTimestamp > txn.startTimestamp) {
        throw new TransactionConflictError(
          "write-write",
          w.table,
          w.cell,
          `write-write conflict on ${w.table} (${w.cell.row}, ${w.cell.column}): a transaction that committed after this one started wrote it`,
        );
      }
      break;
    }
  }
}

async function checkReadWrite(deps: CommitDeps, txn: Transaction, commitTimestamp: number): Promise<void> {
  for (const r of txn.reads()) {
    const now = await deps.reader.visible(r.table, r.cell, commitTimestamp, "report", txn.startTimestamp);
    // A writer still committing may commit before our commit timestamp: assume the worst.
    const seen = "version" in now ? (now.version?.timestamp ?? 0) : -1;
    if (seen !== r.seen) {
      throw new TransactionConflictError(
        "read-write",
        r.table,
        r.cell,
        `read-write conflict on ${r.table} (${r.cell.row}, ${r.cell.column}): it changed between this transaction's start and its commit`,
      );
    }
  }
}

/**
 * Mark a failed commit aborted so no reader waits on it, and remove its versions. Resolves true in
 * the one case where the transaction turns out to have committed after all.
 */
async function abandon(deps: CommitDeps, txn: Transaction): Promise<boolean> {
  try {
    const status = await deps.transactions.rollBack(txn.startTimestamp);
    if (status.state === "committed") return true;
    await Promise.all(txn.writes().map((w) => deps.store.deleteVersions(w.table, w.cell, [txn.startTimestamp])));
  } catch {
    // Best effort: readers and sweep roll back and skip what is left.
  }
  return false;
}

async function release(deps: CommitDeps, commitTokens: readonly string[], immutableToken: string): Promise<void> {
  const { client } = deps;
  if (deps.unlockMode === "async") {
    client.tryUnlock([...commitTokens, immutableToken]);
    return;
  }
  // AtlasDB before ADR 15: two awaited calls, the commit locks first so waiting writers go first.
  // A failure only delays others by a lease; the transaction has committed either way.
  try {
    if (commitTokens.length > 0) await client.unlock(commitTokens);
    await client.unlock([immutableToken]);
  } catch {
    client.tryUnlock([...commitTokens, immutableToken]);
  }
}
