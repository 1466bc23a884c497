import { describe, expect, it } from "vitest";
import { descriptorsOf, makeEngine, req, s, tokenOf, x } from "./engine-fixture.js";

const amap = { behavior: "as-many-as-possible" as const };

describe("as-many-as-possible", () => {
  it("takes every grantable descriptor in ascending order, skipping held and queued ones", () => {
    const t = makeEngine();
    tokenOf(t.engine.lock("ns", req([x("b")])));
    tokenOf(t.engine.lock("ns", req([s("d")])));
    // "d" is held shared and has an exclusive queued: a shared claim may not overtake it.
    expect(t.engine.lock("ns", req([x("d")], { acquireTimeoutMs: 1_000 })).status).toBe("waiting");
    const answer = t.engine.lock("ns", req([x("e"), s("d"), x("c"), x("b"), x("a")], amap));
    expect(descriptorsOf(answer)).toEqual(["a", "c", "e"]);
    // Never joins a queue.
    expect(t.engine.snapshot("ns").descriptors.find((d) => d.descriptor === "b")?.queue).toEqual([]);
    expect(t.engine.snapshot("ns").descriptors.find((d) => d.descriptor === "d")?.queue).toHaveLength(1);
  });

  it("takes at most max, the lowest first", () => {
    const { engine } = makeEngine();
    tokenOf(engine.lock("ns", req([x("a")])));
    expect(descriptorsOf(engine.lock("ns", req([x("a"), x("b"), x("c"), x("d")], { ...amap, max: 2 })))).toEqual(["b", "c"]);
  });

  it("with nothing grantable and timeout 0 answers timeout and leaves no trace", () => {
    const { engine } = makeEngine();
    tokenOf(engine.lock("ns", req([x("a"), x("b")])));
    const before = engine.snapshot("ns");
    expect(engine.lock("ns", req([x("a"), x("b")], amap))).toEqual({ status: "timeout" });
    expect(engine.snapshot("ns")).toEqual(before);
  });

  it("with nothing grantable waits, outside every queue, until one becomes grantable, then takes what it can", () => {
    const t = makeEngine();
    const a = tokenOf(t.engine.lock("ns", req([x("a")])));
    const b = tokenOf(t.engine.lock("ns", req([x("b")])));
    tokenOf(t.engine.lock("ns", req([x("c")])));
    const claim = t.engine.lock("ns", req([x("a"), x("b"), x("c")], { ...amap, acquireTimeoutMs: 1_000 }));
    expect(claim.status).toBe("waiting");
    expect(t.engine.snapshot("ns").descriptors.every((d) => d.queue.length === 0)).toBe(true);
    // A later all-or-none request is not blocked by the watcher.
    const later = t.engine.lock("ns", req([x("b")], { acquireTimeoutMs: 1_000 }));
    t.engine.unlock("ns", { tokens: [b] });
    // "b" goes to the queued request, not to the watcher.
    tokenOf(t.outcome(later));
    expect(t.outcome(claim)).toBeUndefined();
    t.engine.unlock("ns", { tokens: [a] });
    expect(descriptorsOf(t.outcome(claim))).toEqual(["a"]);
    expect(t.engine.snapshot("ns").waitingRequests).toBe(0);
  });

  it("times out when nothing becomes grantable by the deadline", () => {
    const t = makeEngine();
    tokenOf(t.engine.lock("ns", req([x("a")])));
    const claim = t.engine.lock("ns", req([x("a")], { ...amap, acquireTimeoutMs: 50 }));
    t.tick(50);
    expect(t.outcome(claim)).toEqual({ status: "timeout" });
    expect(t.engine.snapshot("ns").descriptors).toHaveLength(1);
  });

  it("a watcher wakes when the queue ahead empties", () => {
    const t = makeEngine();
    tokenOf(t.engine.lock("ns", req([s("d")])));
    const queued = t.engine.lock("ns", req([x("d")], { acquireTimeoutMs: 10 }));
    const claim = t.engine.lock("ns", req([s("d")], { ...amap, acquireTimeoutMs: 1_000 }));
    t.tick(10);
    expect(t.outcome(queued)).toEqual({ status: "timeout" });
    expect(descriptorsOf(t.outcome(claim))).toEqual(["d"]);
  });
});

describe("as-many-as-possible wakes on a whole release", () => {
  it("a waiting claim woken by an unlock takes every descriptor that unlock freed", async () => {
    const { LockEngine } = await import("../../src/engine/lock-engine.js");
    const settled: unknown[] = [];
    const engine = new LockEngine({ clock: () => 0, onSettled: (_p, outcome) => settled.push(outcome) });
    const held = engine.lock("ns", {
      locks: ["t1", "t2", "t3"].map((descriptor) => ({ descriptor, mode: "exclusive" as const })),
    });
    if (held.status !== "acquired") throw new Error("not granted");
    const claim = engine.lock("ns", {
      locks: ["t1", "t2", "t3"].map((descriptor) => ({ descriptor, mode: "exclusive" as const })),
      behavior: "as-many-as-possible",
      acquireTimeoutMs: 1000,
    });
    expect(claim.status).toBe("waiting");
    engine.unlock("ns", { tokens: [held.token] });
    expect(settled).toHaveLength(1);
    const answer = settled[0] as { status: string; acquired: { descriptor: string }[] };
    expect(answer.status).toBe("acquired");
    expect(answer.acquired.map((a) => a.descriptor)).toEqual(["t1", "t2", "t3"]);
  });
});
