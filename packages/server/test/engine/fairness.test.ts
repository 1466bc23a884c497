import { describe, expect, it } from "vitest";
import { descriptorsOf, makeEngine, req, s, tokenOf, x } from "./engine-fixture.js";

describe("FIFO and all-or-none", () => {
  it("a queued exclusive is never overtaken by later shared requests", () => {
    const t = makeEngine();
    const reader = tokenOf(t.engine.lock("ns", req([s("d")])));
    const writer = t.engine.lock("ns", req([x("d")], { acquireTimeoutMs: 500 }));
    expect(writer.status).toBe("waiting");
    // Compatible with the holder, but someone is queued ahead: it must wait, not overtake.
    expect(t.engine.lock("ns", req([s("d")])).status).toBe("timeout");
    const laterReader = t.engine.lock("ns", req([s("d")], { acquireTimeoutMs: 500 }));
    expect(laterReader.status).toBe("waiting");
    t.engine.unlock("ns", { tokens: [reader] });
    const w = tokenOf(t.outcome(writer));
    expect(t.outcome(laterReader)).toBeUndefined();
    t.engine.unlock("ns", { tokens: [w] });
    tokenOf(t.outcome(laterReader));
  });

  it("grants a run of compatible queue heads together, stopping at the first incompatible one", () => {
    const t = makeEngine();
    const holder = tokenOf(t.engine.lock("ns", req([x("d")])));
    const r1 = t.engine.lock("ns", req([s("d")], { acquireTimeoutMs: 500 }));
    const r2 = t.engine.lock("ns", req([s("d")], { acquireTimeoutMs: 500 }));
    const w = t.engine.lock("ns", req([x("d")], { acquireTimeoutMs: 500 }));
    const r3 = t.engine.lock("ns", req([s("d")], { acquireTimeoutMs: 500 }));
    t.engine.unlock("ns", { tokens: [holder] });
    tokenOf(t.outcome(r1));
    tokenOf(t.outcome(r2));
    expect(t.outcome(w)).toBeUndefined();
    expect(t.outcome(r3)).toBeUndefined();
    expect(t.engine.snapshot("ns").descriptors[0]?.queue).toEqual([{ mode: "exclusive" }, { mode: "shared" }]);
  });

  it("acquires in ascending order, holding earlier descriptors while queued on a later one", () => {
    const t = makeEngine();
    const holdsB = tokenOf(t.engine.lock("ns", req([x("b")])));
    const w = t.engine.lock("ns", req([x("c"), x("b"), x("a")], { acquireTimeoutMs: 500 }));
    expect(w.status).toBe("waiting");
    const snap = t.engine.snapshot("ns");
    expect(snap.descriptors.map((d) => [d.descriptor, d.holders.length, d.queue.length])).toEqual([
      ["a", 1, 0],
      ["b", 1, 1],
    ]);
    // "c" was not touched yet: the request sits in exactly one queue.
    expect(t.engine.lock("ns", req([x("c")])).status).toBe("acquired");
    expect(t.engine.lock("ns", req([x("a")])).status).toBe("timeout");
    t.engine.unlock("ns", { tokens: [holdsB] });
    // b granted, then queued on c (held by someone else now).
    expect(t.outcome(w)).toBeUndefined();
    expect(t.engine.snapshot("ns").descriptors.find((d) => d.descriptor === "c")?.queue).toHaveLength(1);
  });

  it("answers acquired in ascending descriptor order", () => {
    const { engine } = makeEngine();
    expect(descriptorsOf(engine.lock("ns", req([x("z"), s("a"), x("m")])))).toEqual(["a", "m", "z"]);
  });

  it("on timeout releases everything it acquired and grants those waiting behind", () => {
    const t = makeEngine();
    const holdsB = tokenOf(t.engine.lock("ns", req([x("b")])));
    const w = t.engine.lock("ns", req([x("a"), x("b")], { acquireTimeoutMs: 100 }));
    const behind = t.engine.lock("ns", req([x("a")], { acquireTimeoutMs: 1_000 }));
    t.tick(99);
    expect(t.outcome(w)).toBeUndefined();
    t.tick(1);
    expect(t.outcome(w)).toEqual({ status: "timeout" });
    tokenOf(t.outcome(behind));
    expect(t.engine.snapshot("ns").descriptors.map((d) => d.descriptor)).toEqual(["a", "b"]);
    t.engine.unlock("ns", { tokens: [holdsB] });
    expect(t.engine.metrics().timeoutsTotal).toBe(1);
  });

  it("acquireTimeoutMs 0 takes nothing when it cannot take everything", () => {
    const { engine } = makeEngine();
    tokenOf(engine.lock("ns", req([x("c")])));
    const before = engine.snapshot("ns");
    expect(engine.lock("ns", req([x("a"), x("b"), x("c")]))).toEqual({ status: "timeout" });
    expect(engine.snapshot("ns")).toEqual(before);
    expect(engine.metrics().heldLocks).toBe(1);
  });

  it("a timed-out queue head lets compatible requests behind it through", () => {
    const t = makeEngine();
    tokenOf(t.engine.lock("ns", req([s("d")])));
    const w = t.engine.lock("ns", req([x("d")], { acquireTimeoutMs: 10 }));
    const r = t.engine.lock("ns", req([s("d")], { acquireTimeoutMs: 100 }));
    t.tick(10);
    expect(t.outcome(w)).toEqual({ status: "timeout" });
    tokenOf(t.outcome(r));
  });
});

describe("large cascades", () => {
  it("grants 20,000 queued shared readers in one release, iteratively", () => {
    const t = makeEngine();
    const writer = tokenOf(t.engine.lock("ns", req([x("d")])));
    const readers = Array.from({ length: 20_000 }, () => t.engine.lock("ns", req([s("d")], { acquireTimeoutMs: 1_000 })));
    expect(t.engine.metrics().waitingRequests).toBe(20_000);
    t.engine.unlock("ns", { tokens: [writer] });
    for (const r of readers) tokenOf(t.outcome(r));
    expect(t.engine.metrics()).toMatchObject({ waitingRequests: 0, heldLocks: 20_000, heldTokens: 20_000 });
  });

  it("a waiter granted its first descriptor goes on to take 10,000 more in ascending order", () => {
    const t = makeEngine();
    const names = Array.from({ length: 10_000 }, (_, i) => `k${String(i).padStart(5, "0")}`);
    const first = tokenOf(t.engine.lock("ns", req([x(names[0]!)])));
    const blocker = tokenOf(t.engine.lock("ns", req([x(names[7_000]!)])));
    const big = t.engine.lock("ns", req([...names].reverse().map(x), { acquireTimeoutMs: 1_000 }));
    t.engine.unlock("ns", { tokens: [first] });
    expect(t.outcome(big)).toBeUndefined();
    expect(t.engine.metrics().heldLocks).toBe(7_001);
    t.engine.unlock("ns", { tokens: [blocker] });
    expect(descriptorsOf(t.outcome(big))).toEqual(names);
  });
});
