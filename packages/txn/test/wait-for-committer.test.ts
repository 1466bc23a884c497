import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  InMemoryKeyValueStore,
  TRANSACTIONS_TABLE,
  TransactionLockTimeoutError,
  TransactionManager,
  TransactionsTable,
  type Cell,
} from "../src/index.js";
import { gate, httpBackend, type Backend } from "./support/harness.js";

/**
 * A store that can hold a committer right after it wrote its versions (so it holds its commit
 * locks, with no commit timestamp yet), and records every transactions-table write.
 */
class PausingStore extends InMemoryKeyValueStore {
  readonly entries: { row: string; value: string }[] = [];
  pause: { wrote: () => void; resume: Promise<void> } | undefined;

  override async put(table: string, cell: Cell, timestamp: number, value: string | null): Promise<void> {
    await super.put(table, cell, timestamp, value);
    const pause = this.pause;
    if (pause === undefined) return;
    this.pause = undefined;
    pause.wrote();
    await pause.resume;
  }

  override async putUnlessExists(table: string, cell: Cell, value: string): Promise<boolean> {
    const won = await super.putUnlessExists(table, cell, value);
    if (won && table === TRANSACTIONS_TABLE) this.entries.push({ row: cell.row, value });
    return won;
  }
}

const tables = { t: "retry-on-write-write" } as const;

describe("a reader meeting a version whose writer is still committing waits for its commit lock (waitForLocks)", () => {
  let backend: Backend;
  beforeAll(async () => {
    backend = await httpBackend();
  });
  afterAll(() => backend.close());

  /** A committer paused with its commit locks held, its versions written and no commit timestamp. */
  async function pausedCommitter(namespace: string, store: PausingStore) {
    const writer = new TransactionManager({ client: backend.client({ namespace }), store, tables });
    await writer.run((txn) => txn.put("t", "k", "c", "old"));
    const wrote = gate();
    const resume = gate();
    store.pause = { wrote: wrote.open, resume: resume.promise };
    let start = 0;
    const committed = writer.run(
      (txn) => {
        start = txn.startTimestamp;
        txn.put("t", "k", "c", "new");
      },
      { retries: 0 },
    );
    await wrote.promise;
    return { committed, resume: resume.open, start: () => start };
  }

  it("the reader waits while the committer holds its lock, neither aborting it nor spinning, then judges its commit", async () => {
    const namespace = "wait-committer";
    const store = new PausingStore();
    const committer = await pausedCommitter(namespace, store);
    // Another client, its own sockets: real concurrency with the committer.
    const reader = new TransactionManager({ client: backend.client({ namespace }), store, tables });
    let readerDone = false;
    const read = reader.run((txn) => txn.get("t", "k", "c"), { retries: 0 }).finally(() => (readerDone = true));
    // The reader is queued on the committer's lock on the server, not polling.
    const deadline = Date.now() + 5_000;
    while (backend.service.snapshot(namespace).waitingRequests !== 1) {
      if (Date.now() > deadline) throw new Error("the reader never waited on the server");
      await new Promise((r) => setTimeout(r, 5));
    }
    await new Promise((r) => setTimeout(r, 100));
    expect(readerDone).toBe(false);
    // Nobody rolled the committer back while it was committing.
    expect(store.entries.filter((e) => e.row === String(committer.start()))).toEqual([]);
    committer.resume();
    await committer.committed;
    // It committed after the reader started: the reader's snapshot shows the old value.
    expect(await read).toBe("old");
    expect(await new TransactionsTable(store).status(committer.start())).toMatchObject({ state: "committed" });
    expect(await reader.run((txn) => txn.get("t", "k", "c"))).toBe("new");
  });

  it("a committer that keeps its lock past lockAcquireTimeoutMs makes the read fail with a clear TransactionLockTimeoutError, and is not rolled back", async () => {
    const namespace = "wait-committer-timeout";
    const store = new PausingStore();
    const committer = await pausedCommitter(namespace, store);
    const reader = new TransactionManager({ client: backend.client({ namespace }), store, tables, lockAcquireTimeoutMs: 300 });
    const started = Date.now();
    const failure = reader.run((txn) => txn.get("t", "k", "c"), { retries: 0 });
    await expect(failure).rejects.toBeInstanceOf(TransactionLockTimeoutError);
    await expect(failure).rejects.toThrow(/still held its commit lock after 300 ms/);
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    committer.resume();
    await committer.committed;
    expect(await reader.run((txn) => txn.get("t", "k", "c"))).toBe("new");
  });
});
