import { describe, expect, it } from "vitest";
import type { TimestampReserver } from "../../src/timestamps/timestamp-reserver.js";
import { makeEngine, req, tokenOf, x } from "./engine-fixture.js";

describe("timestamps, transactions and the immutable timestamp", () => {
  it("timestamps answer [start, start + count) and never repeat", () => {
    const { engine } = makeEngine();
    expect(engine.timestamps("ns", { count: 5 })).toEqual({ start: 1, count: 5 });
    expect(engine.timestamps("ns", { count: 1 })).toEqual({ start: 6, count: 1 });
  });

  it("transactions/start gives each transaction a token and the namespace's immutable timestamp", () => {
    const { engine } = makeEngine();
    const first = engine.startTransactions("ns", { count: 2 });
    expect(first.transactions.map((t) => t.startTimestamp)).toEqual([1, 2]);
    expect(first.immutableTimestamp).toBe(1);
    expect(new Set(first.transactions.map((t) => t.token)).size).toBe(2);
    const second = engine.startTransactions("ns", { count: 1 });
    expect(second.immutableTimestamp).toBe(1);
    expect(engine.immutableTimestamp("ns")).toEqual({ immutableTimestamp: 1 });
    engine.unlock("ns", { tokens: [first.transactions[0]!.token] });
    expect(engine.immutableTimestamp("ns")).toEqual({ immutableTimestamp: 2 });
    expect(engine.snapshot("ns").immutableLocks).toEqual([2, 3]);
  });

  it("with no immutable-timestamp lock held, the immutable timestamp is a fresh timestamp", () => {
    const { engine } = makeEngine();
    const t = engine.startTransactions("ns", { count: 1 });
    engine.unlock("ns", { tokens: [t.transactions[0]!.token] });
    const a = engine.immutableTimestamp("ns").immutableTimestamp;
    const b = engine.immutableTimestamp("ns").immutableTimestamp;
    expect(a).toBeGreaterThan(1);
    expect(b).toBeGreaterThan(a);
  });

  it("immutable-timestamp locks lapse like any token and refresh like any token", () => {
    const t = makeEngine();
    const [a, b] = t.engine.startTransactions("ns", { count: 2 }).transactions;
    t.tick(600);
    expect(t.engine.refresh("ns", { tokens: [b!.token] }).refreshed).toEqual([b!.token]);
    t.tick(400);
    expect(t.engine.immutableTimestamp("ns").immutableTimestamp).toBe(b!.startTimestamp);
    expect(t.lapses).toEqual([{ namespace: "ns", descriptors: 0 }]);
    expect(t.engine.refresh("ns", { tokens: [a!.token] }).refreshed).toEqual([]);
  });

  it("the minimum stays O(1) amortised with many transactions released behind a long one", () => {
    const { engine } = makeEngine();
    const long = engine.startTransactions("ns", { count: 1 }).transactions[0]!;
    for (let i = 0; i < 5_000; i++) {
      const t = engine.startTransactions("ns", { count: 1 });
      expect(t.immutableTimestamp).toBe(long.startTimestamp);
      engine.unlock("ns", { tokens: [t.transactions[0]!.token] });
    }
    engine.unlock("ns", { tokens: [long.token] });
    const last = engine.startTransactions("ns", { count: 1 });
    expect(last.immutableTimestamp).toBe(last.transactions[0]!.startTimestamp);
  });

  it("namespaces are independent: locks, counters and tokens", () => {
    const { engine } = makeEngine();
    tokenOf(engine.lock("one", req([x("a")])));
    tokenOf(engine.lock("two", req([x("a")])));
    expect(engine.timestamps("one", { count: 1 }).start).toBe(2);
    expect(engine.timestamps("three", { count: 1 }).start).toBe(1);
    expect(engine.metrics().namespaces).toBe(3);
  });

  it("resumes above the reserver's floor and asks it only when the reserve runs out", () => {
    const calls: [string, number][] = [];
    const reserver: TimestampReserver = {
      floor: (ns) => (ns === "old" ? 41 : 0),
      reserve: (ns, upTo) => {
        calls.push([ns, upTo]);
        return upTo + 9;
      },
      persist: () => undefined,
    };
    const { engine } = makeEngine({ reserver });
    expect(engine.snapshot("old").nextTimestamp).toBe(42);
    expect(engine.timestamps("old", { count: 1 }).start).toBe(42);
    expect(calls).toEqual([["old", 42]]);
    for (let i = 0; i < 9; i++) engine.timestamps("old", { count: 1 });
    expect(calls).toHaveLength(1);
    const answer = engine.lock("old", req([x("a")]));
    expect(answer.status === "acquired" && answer.acquired[0]!.fencingToken).toBe(52);
    expect(calls).toEqual([["old", 42], ["old", 52]]);
  });

  it("a reserver failure refuses the request and changes nothing", () => {
    let fail = false;
    const reserver: TimestampReserver = {
      floor: () => 0,
      reserve: (_ns, upTo) => {
        if (fail) throw new Error("disk full");
        return upTo;
      },
      persist: () => undefined,
    };
    const { engine } = makeEngine({ reserver });
    engine.timestamps("ns", { count: 1 });
    fail = true;
    const before = engine.snapshot("ns");
    expect(() => engine.lock("ns", req([x("a"), x("b")]))).toThrow("disk full");
    expect(engine.snapshot("ns")).toEqual(before);
  });
});
