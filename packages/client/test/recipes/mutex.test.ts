import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Mutex } from "../../src/index.js";
import { recipeServer, sleep, type RecipeServer } from "./support/recipe-server.js";

const LEASE_MS = 600;

describe("mutex over HTTP", () => {
  let env: RecipeServer;
  beforeAll(async () => {
    env = await recipeServer({ namespace: "mutex", leaseMs: LEASE_MS });
  });
  afterAll(() => env.close());

  it("one holder at a time: a second try is refused at once and succeeds after release", async () => {
    const a = new Mutex(env.client(), "report");
    const b = new Mutex(env.client(), "report");
    const held = await a.lock();
    expect(held).toBeDefined();
    expect(await b.lock()).toBeUndefined();
    expect(await a.lock()).toBeUndefined(); // not reentrant: the same name is the same lock
    expect(await held!.release()).toBe(true);
    expect(await held!.release()).toBe(false); // idempotent
    const next = await b.lock();
    expect(next!.fencingToken()).toBeGreaterThan(held!.fencingToken());
    await next!.release();
  });

  it("unlike a boolean column, a dead holder's mutex comes free after its lease", async () => {
    const dying = env.client();
    expect(await new Mutex(dying, "cron").lock()).toBeDefined();
    const diedAt = performance.now();
    await dying.close(); // stops refreshing, releases nothing
    const other = new Mutex(env.client(), "cron");
    expect(await other.lock()).toBeUndefined();
    const held = await other.lock({ acquireTimeoutMs: 5 * LEASE_MS });
    expect(held).toBeDefined();
    expect(performance.now() - diedAt).toBeLessThan(LEASE_MS + 400);
    await held!.release();
  });

  it("run() excludes concurrent runs, by the runs' own count, and releases after each", async () => {
    let inside = 0;
    let maxInside = 0;
    const runs = await Promise.all(
      Array.from({ length: 12 }, () =>
        new Mutex(env.client(), "critical").run(
          async (signal) => {
            inside++;
            maxInside = Math.max(maxInside, inside);
            await sleep(5);
            expect(signal.aborted).toBe(false);
            inside--;
          },
          { acquireTimeoutMs: 10_000 },
        ),
      ),
    );
    expect(runs.every((r) => r.status === "acquired")).toBe(true);
    expect(maxInside).toBe(1);
    expect((await new Mutex(env.client(), "critical").run(() => "free")).status).toBe("acquired");
  });

  it("run() answers timeout without running when the mutex is held", async () => {
    const holder = await new Mutex(env.client(), "busy").lock();
    let ran = false;
    const result = await new Mutex(env.client(), "busy").run(() => void (ran = true));
    expect(result).toEqual({ status: "timeout" });
    expect(ran).toBe(false);
    await holder!.release();
  });
});
