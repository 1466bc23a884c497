import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  InMemoryKeyValueStore,
  TRANSACTIONS_TABLE,
  TransactionLocksLostError,
  TransactionManager,
  TransactionsTable,
  type Cell,
} from "../src/index.js";
import { httpBackend, type Backend } from "./support/harness.js";

/** A store that records the transactions-table writes and can run a hook when versions are written. */
class SpyStore extends InMemoryKeyValueStore {
  readonly committed: { row: string; value: string }[] = [];
  onPut: (() => void) | undefined;

  override async put(table: string, cell: Cell, timestamp: number, value: string | null): Promise<void> {
    this.onPut?.();
    return super.put(table, cell, timestamp, value);
  }

  override async putUnlessExists(table: string, cell: Cell, value: string): Promise<boolean> {
    if (table === TRANSACTIONS_TABLE) this.committed.push({ row: cell.row, value });
    return super.putUnlessExists(table, cell, value);
  }
}

describe("a lease lapsing mid-commit", () => {
  let backend: Backend;
  beforeAll(async () => {
    backend = await httpBackend();
  });
  afterAll(() => backend.close());

  it("aborts the commit before putUnlessExists: nothing is committed and the value stays old", async () => {
    // The client's clock is the subject: it jumps past every lease while the commit writes its versions.
    let skew = 0;
    const client = backend.client({ namespace: "lapse", now: () => performance.now() + skew });
    const store = new SpyStore();
    const manager = new TransactionManager({ client, store, tables: { t: "retry-on-write-write" } });
    await manager.run((txn) => txn.put("t", "k", "c", "old"));
    const before = store.committed.length;

    let start = 0;
    store.onPut = () => {
      skew += 60_000;
    };
    const attempt = manager.run(
      (txn) => {
        start = txn.startTimestamp;
        txn.put("t", "k", "c", "new");
      },
      { retries: 0 },
    );
    await expect(attempt).rejects.toBeInstanceOf(TransactionLocksLostError);
    store.onPut = undefined;

    // The only transactions-table write of the failed attempt is its own roll-back.
    expect(store.committed.slice(before)).toEqual([{ row: String(start), value: "aborted" }]);
    expect(await new TransactionsTable(store).status(start)).toEqual({ state: "aborted" });
    expect(await store.versions("t", { row: "k", column: "c" })).toHaveLength(1);

    const reader = new TransactionManager({ client: backend.client({ namespace: "lapse" }), store, tables: { t: "retry-on-write-write" } });
    expect(await reader.run((txn) => txn.get("t", "k", "c"))).toBe("old");
    // Its locks were released: another writer commits the row at once.
    await reader.run((txn) => txn.put("t", "k", "c", "newer"), { retries: 0 });
    expect(await reader.run((txn) => txn.get("t", "k", "c"))).toBe("newer");
  });

  it("with a valid lease the same commit succeeds without a lease check call", async () => {
    const client = backend.client({ namespace: "lapse-ok" });
    const store = new SpyStore();
    const manager = new TransactionManager({ client, store, tables: { t: "retry-on-write-write" } });
    const refreshesBefore = client.stats().refreshCalls;
    await manager.run((txn) => txn.put("t", "k", "c", "v"), { retries: 0 });
    expect(client.stats().refreshCalls).toBe(refreshesBefore);
    expect(store.committed).toHaveLength(1);
    expect(await manager.run((txn) => txn.get("t", "k", "c"))).toBe("v");
  });
});
