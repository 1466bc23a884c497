import { afterEach, describe, expect, it, vi } from "vitest";
import { DescriptorState } from "../../src/engine/descriptor-state.js";
import { descriptorsOf, makeEngine, req, s, tokenOf, x } from "./engine-fixture.js";

const amap = { behavior: "as-many-as-possible" as const };

/** Compatibility checks made by one shared release of "d" while `watchers` exclusive claims watch it. */
function checksPerRelease(watchers: number): number {
  const t = makeEngine();
  tokenOf(t.engine.lock("ns", req([s("d")]))); // keeps "d" held shared throughout
  for (let i = 0; i < watchers; i++) {
    expect(t.engine.lock("ns", req([x("d")], { ...amap, acquireTimeoutMs: 60_000 })).status).toBe("waiting");
  }
  const shared = tokenOf(t.engine.lock("ns", req([s("d")])));
  const spy = vi.spyOn(DescriptorState.prototype, "compatible");
  t.engine.unlock("ns", { tokens: [shared] });
  const checks = spy.mock.calls.length;
  spy.mockRestore();
  expect(t.engine.snapshot("ns").waitingRequests).toBe(watchers);
  return checks;
}

describe("as-many-as-possible watchers are indexed by mode", () => {
  afterEach(() => vi.restoreAllMocks());

  it("a release that can grant no watcher does not visit them: the same work with 10 or 10,000", () => {
    const few = checksPerRelease(10);
    const many = checksPerRelease(10_000);
    expect(few).toBeLessThanOrEqual(3);
    expect(many).toBe(few);
  });

  it("grants the earliest-arrived grantable watcher first, across modes, and every compatible one after it", () => {
    const t = makeEngine();
    const holder = tokenOf(t.engine.lock("ns", req([x("d")])));
    const w1 = t.engine.lock("ns", req([s("d")], { ...amap, acquireTimeoutMs: 5_000 }));
    const w2 = t.engine.lock("ns", req([x("d")], { ...amap, acquireTimeoutMs: 5_000 }));
    const w3 = t.engine.lock("ns", req([s("d")], { ...amap, acquireTimeoutMs: 5_000 }));
    t.engine.unlock("ns", { tokens: [holder] });
    // w1 arrived first and is shared: it and the later shared w3 go; the exclusive w2 keeps waiting.
    expect(descriptorsOf(t.outcome(w1))).toEqual(["d"]);
    expect(descriptorsOf(t.outcome(w3))).toEqual(["d"]);
    expect(t.outcome(w2)).toBeUndefined();
    t.engine.unlock("ns", { tokens: [tokenOf(t.outcome(w1)), tokenOf(t.outcome(w3))] });
    expect(descriptorsOf(t.outcome(w2))).toEqual(["d"]);
  });

  it("an exclusive watcher that arrived first goes before later shared ones", () => {
    const t = makeEngine();
    const holder = tokenOf(t.engine.lock("ns", req([x("d")])));
    const w1 = t.engine.lock("ns", req([x("d")], { ...amap, acquireTimeoutMs: 5_000 }));
    const w2 = t.engine.lock("ns", req([s("d")], { ...amap, acquireTimeoutMs: 5_000 }));
    t.engine.unlock("ns", { tokens: [holder] });
    expect(descriptorsOf(t.outcome(w1))).toEqual(["d"]);
    expect(t.outcome(w2)).toBeUndefined();
  });

  it("permit watchers are granted up to the limit, in arrival order", () => {
    const t = makeEngine();
    const holder = tokenOf(t.engine.lock("ns", req([x("d")])));
    const permit = { descriptor: "d", mode: "permit" as const, limit: 2 };
    const ws = [0, 1, 2].map(() => t.engine.lock("ns", req([permit], { ...amap, acquireTimeoutMs: 5_000 })));
    t.engine.unlock("ns", { tokens: [holder] });
    expect(ws.map((w) => t.outcome(w)?.constructor === Object && (t.outcome(w) as { status: string }).status)).toEqual(["acquired", "acquired", false]);
  });
});
