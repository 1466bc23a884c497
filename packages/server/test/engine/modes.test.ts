import { describe, expect, it } from "vitest";
import { makeEngine, p, req, s, tokenOf, x } from "./engine-fixture.js";

describe("lock modes", () => {
  it("exclusive conflicts with every mode", () => {
    const { engine } = makeEngine();
    tokenOf(engine.lock("ns", req([x("d")])));
    expect(engine.lock("ns", req([x("d")])).status).toBe("timeout");
    expect(engine.lock("ns", req([s("d")])).status).toBe("timeout");
    expect(engine.lock("ns", req([p("d", 5)])).status).toBe("timeout");
  });

  it("shared shares with shared only", () => {
    const { engine } = makeEngine();
    tokenOf(engine.lock("ns", req([s("d")])));
    tokenOf(engine.lock("ns", req([s("d")])));
    expect(engine.lock("ns", req([x("d")])).status).toBe("timeout");
    expect(engine.lock("ns", req([p("d", 5)])).status).toBe("timeout");
    expect(engine.snapshot("ns").descriptors[0]?.holders).toHaveLength(2);
  });

  it("permit shares with permit up to the limit", () => {
    const { engine } = makeEngine();
    tokenOf(engine.lock("ns", req([p("d", 2)])));
    tokenOf(engine.lock("ns", req([p("d", 2)])));
    expect(engine.lock("ns", req([p("d", 2)])).status).toBe("timeout");
    expect(engine.lock("ns", req([s("d")])).status).toBe("timeout");
    expect(engine.lock("ns", req([x("d")])).status).toBe("timeout");
  });

  it("raising the limit grants queued permit waiters at once", () => {
    const t = makeEngine();
    tokenOf(t.engine.lock("ns", req([p("d", 1)])));
    const w1 = t.engine.lock("ns", req([p("d", 1)], { acquireTimeoutMs: 500 }));
    const w2 = t.engine.lock("ns", req([p("d", 1)], { acquireTimeoutMs: 500 }));
    expect(w1.status).toBe("waiting");
    // A request that itself times out still sets the limit when it arrives.
    tokenOf(t.engine.lock("ns", req([x("zz")])));
    expect(t.engine.lock("ns", req([p("d", 3), x("zz")])).status).toBe("timeout");
    tokenOf(t.outcome(w1));
    tokenOf(t.outcome(w2));
    expect(t.engine.snapshot("ns").descriptors.find((d) => d.descriptor === "d")?.limit).toBe(3);
  });

  it("lowering the limit never revokes; it stops new grants until holders < limit", () => {
    const { engine } = makeEngine();
    const a = tokenOf(engine.lock("ns", req([p("d", 3)])));
    const b = tokenOf(engine.lock("ns", req([p("d", 3)])));
    const c = tokenOf(engine.lock("ns", req([p("d", 3)])));
    expect(engine.lock("ns", req([p("d", 1)])).status).toBe("timeout");
    expect(engine.snapshot("ns").descriptors[0]?.holders).toHaveLength(3);
    engine.unlock("ns", { tokens: [a, b] });
    expect(engine.lock("ns", req([p("d", 1)])).status).toBe("timeout");
    engine.unlock("ns", { tokens: [c] });
    tokenOf(engine.lock("ns", req([p("d", 1)])));
  });

  it("fencing tokens strictly increase per descriptor across modes and share the namespace counter", () => {
    const { engine } = makeEngine();
    const seen: number[] = [];
    for (const spec of [x("d"), s("d"), p("d", 2), x("d")]) {
      const answer = engine.lock("ns", req([spec]));
      if (answer.status !== "acquired") throw new Error("not acquired");
      seen.push(answer.acquired[0]!.fencingToken);
      engine.timestamps("ns", { count: 3 });
      engine.unlock("ns", { tokens: [answer.token] });
    }
    for (let i = 1; i < seen.length; i++) expect(seen[i]!).toBeGreaterThan(seen[i - 1]!);
    const ts = engine.timestamps("ns", { count: 1 }).start;
    expect(ts).toBeGreaterThan(seen.at(-1)!);
  });
});
