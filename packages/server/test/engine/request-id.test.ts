import { LeaseholdError } from "@leasehold/protocol";
import { describe, expect, it } from "vitest";
import { makeEngine, req, s, tokenOf, x } from "./engine-fixture.js";

describe("requestId idempotency", () => {
  it("a retry of a granted request answers the same token and fencing tokens, and renews the lease", () => {
    const t = makeEngine();
    const first = t.engine.lock("ns", req([x("b"), x("a")], { requestId: "r1", clientDescription: "one" }));
    t.tick(900);
    const again = t.engine.lock("ns", req([x("a"), x("b")], { requestId: "r1", acquireTimeoutMs: 5, clientDescription: "two" }));
    expect(again).toEqual(first);
    t.tick(900);
    // Renewed by the retry at 900: still held at 1800.
    expect(t.engine.refresh("ns", { tokens: [tokenOf(first)] }).refreshed).toEqual([tokenOf(first)]);
    expect(t.engine.metrics().grantsTotal).toBe(2);
  });

  it("a retry of a waiting request joins the wait, extending its deadline", () => {
    const t = makeEngine();
    const holder = tokenOf(t.engine.lock("ns", req([x("a")])));
    const w1 = t.engine.lock("ns", req([x("a")], { requestId: "r", acquireTimeoutMs: 100 }));
    t.tick(50);
    const w2 = t.engine.lock("ns", req([x("a")], { requestId: "r", acquireTimeoutMs: 200 }));
    expect(w2).toBe(w1);
    expect(t.engine.snapshot("ns").waitingRequests).toBe(1);
    t.tick(100);
    expect(t.outcome(w1)).toBeUndefined();
    t.engine.unlock("ns", { tokens: [holder] });
    tokenOf(t.outcome(w1));
  });

  it("a shorter retry never shortens the wait", () => {
    const t = makeEngine();
    tokenOf(t.engine.lock("ns", req([x("a")])));
    const w = t.engine.lock("ns", req([x("a")], { requestId: "r", acquireTimeoutMs: 100 }));
    expect(t.engine.lock("ns", req([x("a")], { requestId: "r" }))).toBe(w);
    t.tick(99);
    expect(t.outcome(w)).toBeUndefined();
    t.tick(1);
    expect(t.outcome(w)).toEqual({ status: "timeout" });
  });

  it("a different identity under a live requestId is REQUEST_ID_CONFLICT and changes nothing", () => {
    const { engine } = makeEngine();
    tokenOf(engine.lock("ns", req([x("a")], { requestId: "r" })));
    const before = engine.snapshot("ns");
    for (const body of [
      req([s("a")], { requestId: "r" }),
      req([x("a"), x("b")], { requestId: "r" }),
      req([x("a")], { requestId: "r", behavior: "as-many-as-possible" }),
    ]) {
      let error: unknown;
      try {
        engine.lock("ns", body);
      } catch (err) {
        error = err;
      }
      expect(error).toBeInstanceOf(LeaseholdError);
      expect((error as LeaseholdError).code).toBe("REQUEST_ID_CONFLICT");
      expect((error as LeaseholdError).status).toBe(409);
    }
    expect(engine.snapshot("ns")).toEqual(before);
  });

  it("is forgotten once the token is released, lapsed, or the request timed out", () => {
    const t = makeEngine();
    const first = tokenOf(t.engine.lock("ns", req([x("a")], { requestId: "r" })));
    t.engine.unlock("ns", { tokens: [first] });
    const second = tokenOf(t.engine.lock("ns", req([x("b")], { requestId: "r" })));
    expect(second).not.toBe(first);
    t.tick(1_000);
    const third = tokenOf(t.engine.lock("ns", req([s("c")], { requestId: "r" })));
    expect(third).not.toBe(second);
    const blocker = tokenOf(t.engine.lock("ns", req([x("q")])));
    const w = t.engine.lock("ns", req([x("q")], { requestId: "w", acquireTimeoutMs: 10 }));
    t.tick(10);
    expect(t.outcome(w)).toEqual({ status: "timeout" });
    t.engine.unlock("ns", { tokens: [blocker] });
    tokenOf(t.engine.lock("ns", req([x("z")], { requestId: "w" })));
  });

  it("is per namespace", () => {
    const { engine } = makeEngine();
    const a = tokenOf(engine.lock("one", req([x("a")], { requestId: "r" })));
    const b = tokenOf(engine.lock("two", req([x("b")], { requestId: "r" })));
    expect(a).not.toBe(b);
  });
});
