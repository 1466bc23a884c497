import { rowLock, type LockWatchUpdate } from "@leasehold/protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { InMemoryKeyValueStore, ReadCache, ReadCacheValidationError, TransactionManager, TransactionsTable } from "../src/index.js";
import { httpBackend, type Backend } from "./support/harness.js";

const K = rowLock("kv", "k");
const cell = { row: "k", column: "v" };

function snapshot(version: number, locked: string[] = [], logId = "log-1"): Extract<LockWatchUpdate, { type: "snapshot" }> {
  return { type: "snapshot", logId, version, locked: locked.map((descriptor) => ({ descriptor, mode: "exclusive" })), prefixes: [rowLock("kv", "")] };
}
function events(from: number, kinds: ("lock" | "unlock")[], descriptor = K, logId = "log-1"): LockWatchUpdate {
  return { type: "events", logId, version: from + kinds.length, events: kinds.map((kind, i) => ({ version: from + i + 1, kind, descriptors: [{ descriptor, mode: "exclusive" }] })) };
}
const view = (version: number, logId = "log-1") => ({ logId, version });
const v = (timestamp: number, value: string) => ({ timestamp, value });

describe("ReadCache's validity rule", () => {
  it("serves a cell only to views with no event on it between the read and the view, in either order", () => {
    const cache = new ReadCache({ prefixes: ["kv"] });
    cache.apply(snapshot(10), 0, 0);
    cache.put("kv", cell, v(3, "a"), view(10), 0);
    expect(cache.get("kv", cell, view(10), 0)?.version).toEqual(v(3, "a"));
    cache.apply(events(10, ["lock", "unlock"]), 0, 0); // a committer wrote k: events 11 and 12
    expect(cache.get("kv", cell, view(12), 0)).toBeUndefined();
    // Read again at 12: serves 12 and later, never a view from before the write.
    cache.put("kv", cell, v(11, "b"), view(12), 0);
    expect(cache.get("kv", cell, view(13), 0)?.version).toEqual(v(11, "b"));
    expect(cache.get("kv", cell, view(10), 0)).toBeUndefined();
  });

  it("never caches or serves a cell while its descriptor is locked, nor reads from before a snapshot", () => {
    const cache = new ReadCache({ prefixes: ["kv"] });
    cache.apply(snapshot(5, [K]), 0, 0);
    cache.put("kv", cell, v(1, "a"), view(5), 0);
    expect(cache.get("kv", cell, view(5), 0)).toBeUndefined();
    cache.apply(events(5, ["unlock"]), 0, 0);
    cache.put("kv", cell, v(1, "a"), view(4), 0); // a transaction that started before the snapshot
    expect(cache.get("kv", cell, view(6), 0)).toBeUndefined();
    cache.put("kv", cell, v(2, "b"), view(6), 0);
    expect(cache.get("kv", cell, view(6), 0)?.version).toEqual(v(2, "b"));
    cache.apply(snapshot(9), 0, 0); // a gap: start over
    expect(cache.get("kv", cell, view(9), 0)).toBeUndefined();
  });

  it("stays cold for coldMs after a new log, and ignores a watcher's snapshot of a new log", () => {
    const cache = new ReadCache({ prefixes: ["kv"] });
    cache.apply(snapshot(1, [], "other"), 0, null);
    expect(cache.since()).toBeNull();
    cache.apply(snapshot(1), 100, 1_000);
    cache.put("kv", cell, v(1, "a"), view(1), 500);
    expect(cache.get("kv", cell, view(1), 1_099)).toBeUndefined();
    cache.put("kv", cell, v(1, "a"), view(1), 1_100);
    expect(cache.get("kv", cell, view(1), 1_100)?.version).toEqual(v(1, "a"));
    // A view of another log is never served.
    expect(cache.get("kv", cell, view(1, "log-2"), 1_200)).toBeUndefined();
  });

  it("does not trust a snapshot whose prefixes do not cover its tables", () => {
    const cache = new ReadCache({ prefixes: ["kv"] });
    cache.apply({ ...snapshot(1), prefixes: ["other"] }, 0, 0);
    cache.put("kv", cell, v(1, "a"), view(1), 0);
    expect(cache.get("kv", cell, view(1), 0)).toBeUndefined();
  });

  it("keeps within maxBytes, dropping the least recently used", () => {
    const cache = new ReadCache({ prefixes: ["kv"], maxBytes: 1_000 });
    cache.apply(snapshot(1), 0, 0);
    for (let i = 0; i < 20; i++) cache.put("kv", { row: `r${i}`, column: "v" }, v(1, "x".repeat(50)), view(1), 0);
    expect(cache.stats().bytes).toBeLessThanOrEqual(1_000);
    expect(cache.get("kv", { row: "r19", column: "v" }, view(1), 0)).toBeDefined();
    expect(cache.get("kv", { row: "r0", column: "v" }, view(1), 0)).toBeUndefined();
  });
});

describe("validation mode", () => {
  let backend: Backend;
  beforeAll(async () => {
    backend = await httpBackend({ leaseMs: 400 });
  });
  afterAll(() => backend.close());

  /** A writer that commits without the commit locks, so no lock event tells the cache. */
  async function rogueWrite(store: InMemoryKeyValueStore, client: ReturnType<Backend["client"]>, value: string): Promise<void> {
    const start = await client.freshTimestamp();
    await store.put("kv", cell, start, value);
    await new TransactionsTable(store).commit(start, await client.freshTimestamp());
  }

  async function warmed(validationRate: number) {
    const client = backend.client({ namespace: `validate-${validationRate}` });
    const store = new InMemoryKeyValueStore();
    const manager = new TransactionManager({ client, store, tables: { kv: "retry-on-write-write" }, readCache: { prefixes: ["kv"], validationRate } });
    await manager.run((txn) => txn.put("kv", "k", "v", "committed"));
    const deadline = performance.now() + 5_000;
    while ((manager.readCacheStats()?.hits ?? 0) === 0 && performance.now() < deadline) {
      await manager.run((txn) => txn.get("kv", "k", "v"));
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(manager.readCacheStats()?.hits).toBeGreaterThan(0);
    return { client, store, manager };
  }

  it("fails loudly when a cache answer differs from the store", async () => {
    const { client, store, manager } = await warmed(1);
    try {
      await rogueWrite(store, client, "behind-the-cache");
      await expect(manager.run((txn) => txn.get("kv", "k", "v"))).rejects.toBeInstanceOf(ReadCacheValidationError);
    } finally {
      manager.close();
    }
  });

  it("without validation the same bypassing write goes unseen (why writers must lock, and what validation is for)", async () => {
    const { client, store, manager } = await warmed(0);
    try {
      await rogueWrite(store, client, "behind-the-cache");
      expect(await manager.run((txn) => txn.get("kv", "k", "v"))).toBe("committed");
    } finally {
      manager.close();
    }
  });

  it("refuses a cached table whose writers take no commit locks", () => {
    expect(
      () => new TransactionManager({ client: backend.client(), store: new InMemoryKeyValueStore(), tables: { kv: "ignore-all" }, readCache: { prefixes: ["kv"] } }),
    ).toThrow(/take no commit locks/);
    expect(() => new ReadCache({ prefixes: ["kv"], validationRate: 2 })).toThrow(/validationRate/);
  });
});
