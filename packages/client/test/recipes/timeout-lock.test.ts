import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TimeoutLock } from "../../src/index.js";
import { recipeServer, sleep, type RecipeServer } from "./support/recipe-server.js";

const LEASE_MS = 600;

describe("timeout lock over HTTP", () => {
  let env: RecipeServer;
  beforeAll(async () => {
    env = await recipeServer({ namespace: "timeout", leaseMs: LEASE_MS });
  });
  afterAll(() => env.close());

  async function acquiredAfter(lock: TimeoutLock, from: number): Promise<number> {
    for (;;) {
      const held = await lock.tryAcquire();
      if (held) {
        held.releaseInBackground();
        return performance.now() - from;
      }
      await sleep(20);
    }
  }

  it("holds for holdMs with nobody releasing it, even past several leases, then comes free by itself", async () => {
    const HOLD_MS = 2 * LEASE_MS + 300;
    const first = new TimeoutLock(env.client(), "hourly", { holdMs: HOLD_MS });
    const second = new TimeoutLock(env.client(), "hourly", { holdMs: HOLD_MS });
    const start = performance.now();
    const held = await first.tryAcquire();
    expect(held).toBeDefined();
    expect(await second.tryAcquire()).toBeUndefined();
    await sleep(LEASE_MS * 1.5);
    expect(await second.tryAcquire()).toBeUndefined(); // still held: refreshed past the lease
    const after = await acquiredAfter(second, start);
    expect(after).toBeGreaterThanOrEqual(HOLD_MS - 50);
    expect(after).toBeLessThan(HOLD_MS + 400);
    expect(held!.released).toBe(true);
  });

  it("may be released before its time", async () => {
    const lock = new TimeoutLock(env.client(), "early", { holdMs: 60_000 });
    const held = await lock.tryAcquire();
    expect(await held!.release()).toBe(true);
    const again = await lock.tryAcquire();
    expect(again).toBeDefined();
    await again!.release();
  });

  it("refuses a hold that is not a positive number", () => {
    expect(() => new TimeoutLock(env.client(), "bad", { holdMs: 0 })).toThrow(/holdMs/);
    expect(() => new TimeoutLock(env.client(), "bad", { holdMs: Number.NaN })).toThrow(/holdMs/);
  });
});
