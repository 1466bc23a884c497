import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Mutex, type HeldLock, type LockTimeout } from "../../src/index.js";
import { recipeServer, sleep, type RecipeServer } from "./support/recipe-server.js";

const LEASE_MS = 600;

function acquired(answer: HeldLock | LockTimeout): HeldLock {
  if (answer.status !== "acquired") throw new Error("expected the mutex");
  return answer;
}

describe("mutex over HTTP", () => {
  let env: RecipeServer;
  beforeAll(async () => {
    env = await recipeServer({ namespace: "mutex", leaseMs: LEASE_MS });
  });
  afterAll(() => env.close());

  const TRY_ONCE = { acquireTimeoutMs: 0 };

  it("one holder at a time: a second try is refused at once and succeeds after release", async () => {
    const a = new Mutex(env.client(), "report");
    const b = new Mutex(env.client(), "report");
    const held = acquired(await a.lock());
    expect(await b.lock(TRY_ONCE)).toEqual({ status: "timeout" });
    expect(await a.lock(TRY_ONCE)).toEqual({ status: "timeout" }); // not reentrant: the same name is the same lock
    expect(await held.release()).toBe(true);
    expect(await held.release()).toBe(false); // idempotent
    const next = acquired(await b.lock(TRY_ONCE));
    expect(next.fencingToken()).toBeGreaterThan(held.fencingToken());
    await next.release();
  });

  it("lock() waits by default, as async-mutex's acquire does, and is granted when the holder releases", async () => {
    const holder = acquired(await new Mutex(env.client(), "queue").lock());
    let granted = false;
    const waiter = new Mutex(env.client(), "queue").lock().then((h) => ((granted = true), h));
    await sleep(3 * LEASE_MS); // far past a lease: the holder's refresher keeps it, the waiter waits
    expect(granted).toBe(false);
    await holder.release();
    const next = acquired(await waiter);
    expect(next.fencingToken()).toBeGreaterThan(holder.fencingToken());
    await next.release();
  });

  it("unlike a boolean column, a dead holder's mutex comes free after its lease", async () => {
    const dying = env.client();
    acquired(await new Mutex(dying, "cron").lock());
    const diedAt = performance.now();
    await dying.close(); // stops refreshing, releases nothing
    const other = new Mutex(env.client(), "cron");
    expect((await other.lock(TRY_ONCE)).status).toBe("timeout");
    const held = acquired(await other.lock({ acquireTimeoutMs: 5 * LEASE_MS }));
    expect(performance.now() - diedAt).toBeLessThan(LEASE_MS + 400);
    await held.release();
  });

  it("runExclusive() waits by default and excludes concurrent runs, by the runs' own count", async () => {
    let inside = 0;
    let maxInside = 0;
    // No options: every run waits its turn, as with async-mutex; none may answer timeout.
    const runs = await Promise.all(
      Array.from({ length: 12 }, () =>
        new Mutex(env.client(), "critical").runExclusive(async (signal) => {
          inside++;
          maxInside = Math.max(maxInside, inside);
          await sleep(5);
          expect(signal.aborted).toBe(false);
          inside--;
        }),
      ),
    );
    expect(runs.map((r) => r.status)).toEqual(Array.from({ length: 12 }, () => "acquired"));
    expect(maxInside).toBe(1);
    expect(await new Mutex(env.client(), "critical").runExclusive(TRY_ONCE, () => "free")).toMatchObject({ status: "acquired", value: "free" });
  });

  it("runExclusive() with a bounded wait answers timeout without running when the mutex is held", async () => {
    const holder = acquired(await new Mutex(env.client(), "busy").lock());
    let ran = false;
    const result = await new Mutex(env.client(), "busy").runExclusive({ acquireTimeoutMs: 50 }, () => void (ran = true));
    expect(result).toEqual({ status: "timeout" });
    expect(ran).toBe(false);
    await holder.release();
  });

  it("await using releases the held mutex at the end of the scope, even when the block throws", async () => {
    const name = "scoped";
    const failing = async (): Promise<number> => {
      await using held = await new Mutex(env.client(), name).lock(TRY_ONCE);
      if (held.status === "timeout") throw new Error("expected the mutex");
      throw new Error(`boom ${held.fencingToken()}`);
    };
    await expect(failing()).rejects.toThrow(/^boom \d+$/);
    // Disposal awaited the unlock: the mutex is free the moment the scope is left.
    const next = acquired(await new Mutex(env.client(), name).lock(TRY_ONCE));
    await next.release();
  });

  it("a missing or misplaced work function is a clear INVALID_ARGUMENT", async () => {
    const m = new Mutex(env.client(), "args") as unknown as { runExclusive(...args: unknown[]): Promise<unknown> };
    await expect(m.runExclusive({})).rejects.toMatchObject({ code: "INVALID_ARGUMENT", message: /last argument must be the work function/ });
    await expect(m.runExclusive(() => 1, {})).rejects.toMatchObject({ code: "INVALID_ARGUMENT", message: /options go before the work function/ });
  });
});
