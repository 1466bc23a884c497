import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TransactionConflictError, type ConflictHandler, type Transaction, type TransactionManager } from "../src/index.js";
import { gate, httpBackend, type Backend } from "./support/harness.js";
import { backendOptions, TXN_VARIANTS, variantKit } from "./support/variants.js";

// The classic: at least one doctor must stay on call; each goes off call if the other is on.
async function goOffCall(txn: Transaction, me: string, other: string): Promise<boolean> {
  const mine = await txn.get("oncall", me, "on");
  const theirs = await txn.get("oncall", other, "on");
  if (mine !== "1" || theirs !== "1") return false;
  txn.put("oncall", me, "on", "0");
  return true;
}

describe.each(TXN_VARIANTS)("write skew ($name)", (variant) => {
  const kit = variantKit(variant);
  let backend: Backend;
  beforeAll(async () => {
    backend = await httpBackend(backendOptions(variant));
  });
  afterAll(() => backend.close());

  async function setup(handler: ConflictHandler) {
    const manager = await kit.manager({ client: backend.client(), tables: { oncall: handler } });
    await manager.run((txn) => {
      txn.put("oncall", "alice", "on", "1");
      txn.put("oncall", "bob", "on", "1");
    });
    const onCall = () => manager.run(async (txn) => [await txn.get("oncall", "alice", "on"), await txn.get("oncall", "bob", "on")].filter((v) => v === "1").length);
    return { manager, onCall };
  }

  /** Both read before either commits; alice commits first, then bob. */
  async function interleave(manager: TransactionManager) {
    const bothRead = { alice: gate(), bob: gate() };
    const aliceDone = gate();
    const alice = manager.run(
      async (txn) => {
        const r = await goOffCall(txn, "alice", "bob");
        bothRead.alice.open();
        await bothRead.bob.promise;
        return r;
      },
      { retries: 0 },
    );
    void alice.finally(aliceDone.open).catch(() => undefined);
    const bob = manager.run(
      async (txn) => {
        const r = await goOffCall(txn, "bob", "alice");
        bothRead.bob.open();
        await aliceDone.promise;
        return r;
      },
      { retries: 0 },
    );
    return Promise.allSettled([alice, bob]);
  }

  it("is possible under snapshot isolation (retry-on-write-write): both go off call", async () => {
    const { manager, onCall } = await setup("retry-on-write-write");
    const [alice, bob] = await interleave(manager);
    expect(alice).toEqual({ status: "fulfilled", value: true });
    expect(bob).toEqual({ status: "fulfilled", value: true });
    expect(await onCall()).toBe(0);
  });

  it("is prevented by the serializable handler: the second commit fails its read-write check", async () => {
    const { manager, onCall } = await setup("serializable");
    const [alice, bob] = await interleave(manager);
    expect(alice).toEqual({ status: "fulfilled", value: true });
    expect(bob.status).toBe("rejected");
    const err = (bob as PromiseRejectedResult).reason as unknown;
    expect(err).toBeInstanceOf(TransactionConflictError);
    expect((err as TransactionConflictError).kind).toBe("read-write");
    expect((err as TransactionConflictError).cell).toEqual({ row: "alice", column: "on" });
    expect(await onCall()).toBe(1);
  });

  it("stays prevented when 16 serializable doctors race with retries: someone is always on call", async () => {
    const manager = await kit.manager({ client: backend.client(), tables: { oncall: "serializable" }, retries: 50 });
    const doctors = Array.from({ length: 16 }, (_, i) => `d${i}`);
    await manager.run((txn) => {
      for (const d of doctors) txn.put("oncall", d, "on", "1");
    });
    const results = await Promise.all(
      doctors.map((me) =>
        manager.run(async (txn) => {
          let others = 0;
          for (const d of doctors) if (d !== me && (await txn.get("oncall", d, "on")) === "1") others++;
          if ((await txn.get("oncall", me, "on")) !== "1" || others === 0) return false;
          txn.put("oncall", me, "on", "0");
          return true;
        }),
      ),
    );
    const left = await manager.run(async (txn) => {
      let n = 0;
      for (const d of doctors) if ((await txn.get("oncall", d, "on")) === "1") n++;
      return n;
    });
    expect(left).toBeGreaterThanOrEqual(1);
    expect(results.filter(Boolean).length).toBe(doctors.length - left);
  });
});
