import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { InMemoryKeyValueStore, TransactionError, TransactionManager, TransactionsTable, type KeyValueStore } from "../src/index.js";
import { httpBackend, type Backend } from "./support/harness.js";
import { openPostgresStore, type OpenedStore } from "./support/stores.js";

const KEYS = 64;
const WRITERS_PER_MANAGER = 2;
const READERS_PER_MANAGER = 6;
const RUN_MS = 4_000;

interface Read {
  readonly start: number;
  readonly key: string;
  readonly value: string | undefined;
}

/** Every read from every attempt against the history of committed writes: each must be the newest committed before its start. */
async function checkHistory(store: KeyValueStore, reads: readonly Read[], written: ReadonlyMap<string, number>): Promise<{ checked: number; stale: string[] }> {
  const transactions = new TransactionsTable(store);
  const commits = new Map<string, { commit: number; value: string }[]>();
  for (const [value, start] of written) {
    const status = await transactions.status(start);
    if (status.state !== "committed") continue;
    const key = value.slice(value.indexOf(":") + 1);
    let list = commits.get(key);
    if (list === undefined) commits.set(key, (list = []));
    list.push({ commit: status.commitTimestamp, value });
  }
  for (const list of commits.values()) list.sort((a, b) => a.commit - b.commit);
  const stale: string[] = [];
  for (const r of reads) {
    let expected: string | undefined = "initial";
    for (const c of commits.get(r.key) ?? []) if (c.commit < r.start) expected = c.value;
    if (r.value !== expected) stale.push(`read of ${r.key} at ${r.start} saw ${String(r.value)}, the history says ${String(expected)}`);
  }
  return { checked: reads.length, stale };
}

describe.each(["memory", "postgres"] as const)("read cache against a history of concurrent writers (%s store)", (kind) => {
  let backend: Backend;
  let opened: OpenedStore | undefined;
  beforeAll(async () => {
    // Leases of 2 s: a cache stays cold for a lease (validForMs 1 s) after it first sees a lock table.
    backend = await httpBackend({ leaseMs: 2_000 });
  });
  afterAll(async () => {
    await backend.close();
    await opened?.close();
  });

  it("every read of two cached managers' transactions, hit or miss, is the newest value committed before its start", async () => {
    let store: KeyValueStore;
    if (kind === "memory") store = new InMemoryKeyValueStore();
    else store = (opened = await openPostgresStore()).store;
    const managers = [0, 1].map(
      () =>
        new TransactionManager({
          client: backend.client({ namespace: `history-${kind}` }),
          store,
          tables: { kv: "retry-on-write-write" },
          retries: 0,
          // Validation off: the history is the judge here, so a stale answer is not caught early.
          readCache: { prefixes: ["kv"], validationRate: 0 },
        }),
    );
    const key = (i: number) => `k${i}`;
    await managers[0]!.run((txn) => {
      for (let i = 0; i < KEYS; i++) txn.put("kv", key(i), "v", "initial");
    });

    const reads: Read[] = [];
    const written = new Map<string, number>();
    const deadline = performance.now() + RUN_MS;
    const random = (n: number) => Math.floor(Math.random() * n);
    async function worker(manager: TransactionManager, writes: boolean): Promise<void> {
      while (performance.now() < deadline) {
        try {
          await manager.run(async (txn) => {
            const n = writes ? 2 : 4;
            for (let i = 0; i < n; i++) {
              const k = key(random(KEYS));
              reads.push({ start: txn.startTimestamp, key: k, value: await txn.get("kv", k, "v") });
            }
            if (writes) {
              const k = key(random(KEYS));
              const value = `${txn.startTimestamp}:${k}`;
              written.set(value, txn.startTimestamp);
              txn.put("kv", k, "v", value);
            }
          });
        } catch (err) {
          if (!(err instanceof TransactionError)) throw err;
        }
      }
    }
    await Promise.all(
      managers.flatMap((m) => [
        ...Array.from({ length: WRITERS_PER_MANAGER }, () => worker(m, true)),
        ...Array.from({ length: READERS_PER_MANAGER }, () => worker(m, false)),
      ]),
    );
    for (const m of managers) m.close();

    const { checked, stale } = await checkHistory(store, reads, written);
    expect(stale.slice(0, 5)).toEqual([]);
    expect(checked).toBeGreaterThan(200);
    const hits = managers.reduce((s, m) => s + (m.readCacheStats()?.hits ?? 0), 0);
    // The cache answered a real share of the reads (it is cold for the first second).
    expect(hits).toBeGreaterThan(500);
    expect([...written.values()].length).toBeGreaterThan(20);
  });
});
