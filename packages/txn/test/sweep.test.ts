import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Sweeper, TransactionsTable } from "../src/index.js";
import { gate, httpBackend, type Backend } from "./support/harness.js";
import { TXN_VARIANTS, variantKit } from "./support/variants.js";

const LEASE_MS = 600;

describe.each(TXN_VARIANTS)("sweep ($name)", (variant) => {
  const kit = variantKit(variant);
  let backend: Backend;
  beforeAll(async () => {
    backend = await httpBackend({ leaseMs: LEASE_MS });
  });
  afterAll(() => backend.close());

  async function setup(namespace: string) {
    const client = backend.client({ namespace: `${namespace}-${variant.store}` });
    const store = await kit.store();
    const manager = await kit.manager({ client, store, tables: { t: "retry-on-write-write" } });
    const sweeper = new Sweeper({ client, store, tables: ["t"] });
    const write = (row: string, value: string | null) =>
      manager.run((txn) => (value === null ? txn.delete("t", row, "c") : txn.put("t", row, "c", value)));
    const values = async (row: string) => {
      const out: (string | null)[] = [];
      for (const v of await store.versions("t", { row, column: "c" })) out.push(v.value);
      return out;
    };
    return { client, store, manager, sweeper, write, values };
  }

  it("removes what no transaction can read and keeps what a running one still reads", async () => {
    const { store, manager, sweeper, write, values } = await setup("sweep-running");
    await write("k", "v1");
    await write("k", "v2");
    await write("gone", "x");
    await write("gone", null);
    // Writers that died after writing a version and before their commit point (no lock, no entry):
    // one on a row the running transaction reads (the reader rolls it back), one on a row nobody reads.
    const oracle = backend.client({ namespace: `sweep-running-${variant.store}` });
    const deadOnK = await oracle.freshTimestamp();
    await store.put("t", { row: "k", column: "c" }, deadOnK, "never-committed");
    const deadUnread = await oracle.freshTimestamp();
    await store.put("t", { row: "unread", column: "c" }, deadUnread, "never-committed");

    const reading = gate();
    const release = gate();
    const running = manager.run(async (txn) => {
      const first = await txn.get("t", "k", "c");
      reading.open();
      await release.promise;
      return [first, await txn.get("t", "k", "c"), await txn.get("t", "gone", "c")];
    });
    await reading.promise;
    await write("k", "v3");
    await write("k", "v4");

    const first = await sweeper.sweep();
    // v1 was superseded before the running transaction started; it reads v2; v3 and v4 came after.
    expect(await values("k")).toEqual(["v2", "v3", "v4"]);
    expect(await values("gone")).toEqual([]);
    expect(await values("unread")).toEqual([]);
    expect(first.writersRolledBack).toBe(1); // the one on "unread"; the reader rolled back the other
    expect(first.versionsDeleted).toBe(5); // v1, both dead writers' versions, x and its delete
    const transactions = new TransactionsTable(store);
    expect(await transactions.status(deadOnK)).toEqual({ state: "aborted" });
    expect(await transactions.status(deadUnread)).toEqual({ state: "aborted" });

    release.open();
    expect(await running).toEqual(["v2", "v2", undefined]);

    // The running transaction's immutable-timestamp lock goes with tryUnlock, a moment after run() resolved.
    let second = await sweeper.sweep();
    for (let i = 0; i < 100 && second.sweepTimestamp <= first.sweepTimestamp; i++) {
      await new Promise((r) => setTimeout(r, 5));
      second = await sweeper.sweep();
    }
    expect(second.sweepTimestamp).toBeGreaterThan(first.sweepTimestamp);
    expect(await values("k")).toEqual(["v4"]);
    expect(await manager.run((txn) => txn.get("t", "k", "c"))).toBe("v4");
  });

  it("a leaked transaction pins the immutable timestamp only until its lease lapses", async () => {
    const { sweeper, write, values } = await setup("sweep-leak");
    await write("k", "v1");
    const leaker = backend.client({ namespace: `sweep-leak-${variant.store}` });
    const leaked = await leaker.startTransaction();
    await leaker.close(); // never unlocks: its immutable-timestamp lock lapses with the lease
    await write("k", "v2");
    await write("k", "v3");

    const pinned = await sweeper.sweep();
    expect(pinned.sweepTimestamp).toBeLessThanOrEqual(leaked.startTimestamp);
    expect(await values("k")).toEqual(["v1", "v2", "v3"]); // v1 is what the leaked one would read

    const deadline = Date.now() + 10 * LEASE_MS;
    let swept = pinned;
    while (Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, LEASE_MS / 4));
      swept = await sweeper.sweep();
      if (swept.sweepTimestamp > leaked.startTimestamp) break;
    }
    expect(swept.sweepTimestamp).toBeGreaterThan(leaked.startTimestamp);
    expect(await values("k")).toEqual(["v3"]);
  });
});
