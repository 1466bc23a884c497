import type { DescriptorsPage } from "@leasehold/protocol";
import { describe, expect, it } from "vitest";
import { tokenFingerprint } from "../../src/engine/token-fingerprint.js";
import { makeEngine, x } from "./engine-fixture.js";

const query = { view: "descriptors" as const, contended: false, limit: 3 };

describe("LockEngine.inspectInSteps", () => {
  it("builds a page over several slices while the table changes, and shows only what is still true", () => {
    const { engine, tick } = makeEngine({ leaseMs: 60_000 });
    const tokens = new Map<string, string>();
    for (const d of ["e", "a", "d", "b", "c", "f"]) {
      const res = engine.lock("ns", { locks: [x(d)], clientDescription: `holder of ${d}` });
      if (res.status !== "acquired") throw new Error("not granted");
      tokens.set(d, res.token);
    }
    const job = engine.inspectInSteps("ns", query);
    let steps = 0;
    while (!job.step(1)) {
      steps++;
      // Between slices: "a" is released and re-taken by someone else, "b" goes away for good.
      if (steps === 2) {
        engine.unlock("ns", { tokens: [tokens.get("a")!, tokens.get("b")!] });
        const again = engine.lock("ns", { locks: [x("a")], clientDescription: "new holder of a" });
        if (again.status !== "acquired") throw new Error("not granted");
        tokens.set("a", again.token);
      }
    }
    expect(steps).toBeGreaterThan(3);
    tick(5);
    const page = job.finish() as DescriptorsPage;
    // "b" was chosen before it was released, or not at all: either way it is not shown as held.
    for (const d of page.descriptors) {
      expect(d.holders).toEqual([expect.objectContaining({ fingerprint: tokenFingerprint(tokens.get(d.descriptor)!), clientDescription: d.descriptor === "a" ? "new holder of a" : `holder of ${d.descriptor}` })]);
    }
    expect(page.descriptors.map((d) => d.descriptor)).not.toContain("b");
    expect(page.nextCursor).toBeDefined();
    // The same query in one go, now, gives the same page.
    expect(engine.inspect("ns", query)).toEqual(page);
  });

  it("pages the smallest descriptors after the cursor out of an unordered table, each exactly once", () => {
    const { engine } = makeEngine({ leaseMs: 60_000 });
    const names = Array.from({ length: 500 }, (_, i) => `k${String((i * 7919) % 500).padStart(3, "0")}`);
    for (let i = 0; i < names.length; i += 50) engine.lock("ns", { locks: names.slice(i, i + 50).map(x) });
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = engine.inspect("ns", { ...query, limit: 37, cursor }) as DescriptorsPage;
      seen.push(...page.descriptors.map((d) => d.descriptor));
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    expect(seen).toEqual([...names].sort());
  });
});
