import { LeaseholdError } from "@leasehold/protocol";
import { describe, expect, it } from "vitest";
import { makeEngine, req, s, tokenOf, x } from "./engine-fixture.js";

describe("abandonment and close", () => {
  it("abandoning releases what the request acquired, leaves its queue and grants those behind", () => {
    const t = makeEngine();
    const holdsB = tokenOf(t.engine.lock("ns", req([x("b")])));
    const w = t.engine.lock("ns", req([x("a"), x("b")], { acquireTimeoutMs: 1_000 }));
    const behindA = t.engine.lock("ns", req([x("a")], { acquireTimeoutMs: 1_000 }));
    const behindB = t.engine.lock("ns", req([s("b")], { acquireTimeoutMs: 1_000 }));
    if (w.status !== "waiting") throw new Error("expected waiting");
    expect(t.engine.abandon(w)).toBe(true);
    expect(t.engine.abandon(w)).toBe(false);
    tokenOf(t.outcome(behindA));
    t.engine.unlock("ns", { tokens: [holdsB] });
    tokenOf(t.outcome(behindB));
    expect(t.outcome(w)).toBeUndefined();
    expect(t.engine.metrics()).toMatchObject({ abandonedTotal: 1, waitingRequests: 0 });
  });

  it("abandoning a watcher removes it from every watch list", () => {
    const t = makeEngine();
    const a = tokenOf(t.engine.lock("ns", req([x("a")])));
    const w = t.engine.lock("ns", req([x("a")], { behavior: "as-many-as-possible", acquireTimeoutMs: 1_000 }));
    if (w.status !== "waiting") throw new Error("expected waiting");
    t.engine.abandon(w);
    t.engine.unlock("ns", { tokens: [a] });
    expect(t.outcome(w)).toBeUndefined();
    expect(t.engine.snapshot("ns").descriptors).toEqual([]);
  });

  it("close answers every waiter UNAVAILABLE and refuses later calls", () => {
    const t = makeEngine();
    tokenOf(t.engine.lock("ns", req([x("a")])));
    const w1 = t.engine.lock("ns", req([x("a")], { acquireTimeoutMs: 1_000 }));
    const w2 = t.engine.lock("other", req([x("b")], { acquireTimeoutMs: 1_000 }));
    t.engine.close();
    t.engine.close();
    for (const w of [w1, w2]) {
      if (w.status === "waiting") {
        const outcome = t.outcome(w);
        expect(outcome).toBeInstanceOf(LeaseholdError);
        expect((outcome as LeaseholdError).code).toBe("UNAVAILABLE");
        expect((outcome as LeaseholdError).message).toMatch(/shutting down/);
      }
    }
    expect(w1.status).toBe("waiting");
    expect(() => t.engine.lock("ns", req([x("z")]))).toThrow(/shutting down/);
    expect(() => t.engine.timestamps("ns", { count: 1 })).toThrow(LeaseholdError);
  });
});
