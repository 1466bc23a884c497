import { describe, expect, it } from "vitest";
import { runSeed } from "../src/sim-run.js";

describe("a simulated run", () => {
  it("is the same run, event for event, every time its seed runs, and another seed is another run", async () => {
    const a = await runSeed(3, new Set());
    const b = await runSeed(3, new Set());
    expect(a.steps).toBeGreaterThan(1_000);
    expect(b.digest).toBe(a.digest);
    expect(b.violations).toEqual(a.violations);
    expect((await runSeed(4, new Set())).digest).not.toBe(a.digest);
  });

  it("puts Node's timers and randomness back after a run", async () => {
    const before = { setTimeout: globalThis.setTimeout, random: Math.random };
    await runSeed(5, new Set());
    expect(globalThis.setTimeout).toBe(before.setTimeout);
    expect(Math.random).toBe(before.random);
  });
});
