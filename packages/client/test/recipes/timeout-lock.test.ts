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
      if (held.status === "acquired") {
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
    expect(held.status).toBe("acquired");
    expect(await second.tryAcquire()).toEqual({ status: "timeout" });
    await sleep(LEASE_MS * 1.5);
    expect(await second.tryAcquire()).toEqual({ status: "timeout" }); // still held: refreshed past the lease
    const after = await acquiredAfter(second, start);
    expect(after).toBeGreaterThanOrEqual(HOLD_MS - 50);
    expect(after).toBeLessThan(HOLD_MS + 400);
    expect(held.status === "acquired" && held.released).toBe(true);
  });

  it("may be released before its time", async () => {
    const lock = new TimeoutLock(env.client(), "early", { holdMs: 60_000 });
    const held = await lock.tryAcquire();
    if (held.status !== "acquired") throw new Error("expected the lock");
    expect(await held.release()).toBe(true);
    {
      // Or at the end of a scope: `await using` releases it early, long before holdMs.
      await using again = await lock.tryAcquire();
      expect(again.status).toBe("acquired");
    }
    expect((await lock.tryAcquire()).status).toBe("acquired");
  });

  it("refuses a hold that is not a positive number", () => {
    expect(() => new TimeoutLock(env.client(), "bad", { holdMs: 0 })).toThrow(/holdMs/);
    expect(() => new TimeoutLock(env.client(), "bad", { holdMs: Number.NaN })).toThrow(/holdMs/);
  });
});
