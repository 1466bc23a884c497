import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { InMemoryRetriesLeft, runClaimWorker, WorkQueueClaims, type ClaimWorkerStats } from "../../src/index.js";
import { recipeServer, sleep, tick, type RecipeServer } from "./support/recipe-server.js";

/** A task table that notices two workers running one task at once. */
class Table {
  readonly #unfinished = new Set<string>();
  readonly #running = new Set<string>();
  readonly runs = new Map<string, number>();
  readonly overlaps: string[] = [];
  emptyReads = 0;

  add(ids: readonly string[]): void {
    for (const id of ids) {
      this.#unfinished.add(id);
      this.runs.set(id, 0);
    }
  }

  window(k: number): string[] {
    const ids = [...this.#unfinished].slice(0, k);
    if (ids.length === 0) this.emptyReads++;
    return ids;
  }

  get remaining(): number {
    return this.#unfinished.size;
  }

  /** Run one task: fails with `fail(id, attempt)`'s error, else finishes it. */
  async run(id: string, fail?: (id: string, attempt: number) => boolean): Promise<void> {
    if (!this.#unfinished.has(id)) return; // stale window: finished meanwhile
    if (this.#running.has(id)) this.overlaps.push(id);
    this.#running.add(id);
    const attempt = (this.runs.get(id) ?? 0) + 1;
    this.runs.set(id, attempt);
    try {
      await tick(); // the work, during which other workers carry on
      await tick();
      if (fail?.(id, attempt)) throw new Error(`task ${id} failed (attempt ${attempt})`);
      this.#unfinished.delete(id);
    } finally {
      this.#running.delete(id);
    }
  }

  giveUp(id: string): void {
    this.#unfinished.delete(id);
  }
}

const ids = (prefix: string, n: number): string[] => Array.from({ length: n }, (_, i) => `${prefix}${String(i).padStart(4, "0")}`);

describe("runClaimWorker, continuous mode, over HTTP", () => {
  let env: RecipeServer;
  beforeAll(async () => {
    env = await recipeServer({ namespace: "continuous", leaseMs: 3_000 });
  });
  afterAll(() => env.close());

  it("8 workers keep claiming: tasks added in two waves each run once, never two at once, and an empty queue idles instead of spinning", async () => {
    const table = new Table();
    table.add(ids("w1-", 400));
    const stop = new AbortController();
    const clients = Array.from({ length: 3 }, () => env.client());
    const workers = Array.from({ length: 8 }, (_, w) =>
      runClaimWorker(new WorkQueueClaims(clients[w % clients.length]!, "waves"), {
        candidates: () => table.window(100),
        process: async (taskIds, _claim, signal) => {
          for (const id of taskIds) {
            expect(signal.aborted).toBe(false);
            await table.run(id);
          }
        },
        max: 5,
        signal: stop.signal,
        continuous: { idleMinMs: 10, idleMaxMs: 80 },
      }),
    );
    await expect.poll(() => table.remaining, { timeout: 20_000, interval: 20 }).toBe(0);
    // A lull: every worker finds the window empty and idles with backoff.
    const readsBefore = table.emptyReads;
    await sleep(400);
    const lullReads = table.emptyReads - readsBefore;
    // Backoff of at most 80 ms (40 on average) per read: about 10 reads per worker in 400 ms, ~80 in
    // all; with no backoff, hundreds per worker. At least one read each: they keep watching.
    expect(lullReads).toBeGreaterThanOrEqual(8);
    expect(lullReads).toBeLessThan(200); // measured: 76 with the backoff, 752 with a bare 0 ms yield
    // New work is picked up without a restart.
    table.add(ids("w2-", 200));
    await expect.poll(() => table.remaining, { timeout: 20_000, interval: 20 }).toBe(0);
    stop.abort();
    const stats = await Promise.all(workers);
    expect(table.overlaps).toEqual([]);
    expect([...table.runs.values()].filter((n) => n !== 1)).toEqual([]);
    expect(table.runs.size).toBe(600);
    const sum = (k: keyof ClaimWorkerStats): number => stats.reduce((t, s) => t + s[k], 0);
    expect(sum("tasks")).toBeGreaterThanOrEqual(600);
    expect(sum("failures")).toBe(0);
    expect(stats.filter((s) => s.batches > 0).length).toBeGreaterThan(1); // real concurrency
  });

  it("a failing task is retried by whichever worker claims it next, then given up after maxAttempts; a flaky one succeeds", async () => {
    const table = new Table();
    table.add([...ids("ok-", 60), "poison", "flaky"]);
    const retriesLeft = new InMemoryRetriesLeft(); // one count for all workers (as a task-table column would be)
    const givenUp: { id: string; error: unknown }[] = [];
    const errors: string[] = [];
    const stop = new AbortController();
    const fail = (id: string, attempt: number): boolean => id === "poison" || (id === "flaky" && attempt <= 2);
    const workers = Array.from({ length: 4 }, () =>
      runClaimWorker(new WorkQueueClaims(env.client(), "retries"), {
        candidates: () => table.window(50),
        process: async (taskIds) => {
          for (const id of taskIds) await table.run(id, fail);
        },
        max: 1, // one task per claim: a failure is that task's alone
        waitMs: 200,
        signal: stop.signal,
        continuous: {
          maxAttempts: 3,
          retriesLeft,
          idleMinMs: 5,
          idleMaxMs: 20,
          onGiveUp: (id, error) => {
            givenUp.push({ id, error });
            table.giveUp(id); // "status = failed": it leaves the window
          },
          onError: (error, taskIds) => errors.push(`${taskIds.join(",")}: ${(error as Error).message}`),
        },
      }),
    );
    await expect.poll(() => table.remaining, { timeout: 20_000, interval: 20 }).toBe(0);
    stop.abort();
    const stats = await Promise.all(workers);
    expect(table.runs.get("poison")).toBe(3);
    expect(givenUp.map((g) => g.id)).toEqual(["poison"]);
    expect((givenUp[0]!.error as Error).message).toBe("task poison failed (attempt 3)");
    expect(table.runs.get("flaky")).toBe(3); // failed twice, then done: not given up
    expect(errors.sort()).toEqual([
      "flaky: task flaky failed (attempt 1)",
      "flaky: task flaky failed (attempt 2)",
      "poison: task poison failed (attempt 1)",
      "poison: task poison failed (attempt 2)",
      "poison: task poison failed (attempt 3)",
    ]);
    for (const id of ids("ok-", 60)) expect(table.runs.get(id)).toBe(1);
    expect(stats.reduce((t, s) => t + s.failures, 0)).toBe(5);
    expect(stats.reduce((t, s) => t + s.givenUp, 0)).toBe(1);
    expect(table.overlaps).toEqual([]);
    // Succeeded tasks are forgotten; the given-up one stays marked, so a stale window skips it.
    expect(retriesLeft.get("flaky")).toBeUndefined();
    expect(retriesLeft.get("poison")).toBe(-1);
  });

  it("stops promptly on its signal, whether idle, waiting for a held task, or in the middle of a batch", async () => {
    const stop = new AbortController();
    const client = env.client();
    // Idle: an empty queue and the default 5 s idle ceiling.
    const idle = runClaimWorker(new WorkQueueClaims(client, "stop-idle"), {
      candidates: () => [],
      process: async () => undefined,
      signal: stop.signal,
      continuous: { idleMinMs: 5_000 },
    });
    // Waiting: its only candidate is held by another claim, and it waits up to 30 s for it.
    const holder = await new WorkQueueClaims(env.client(), "stop-wait").claim(["held"]);
    expect(holder.status).toBe("acquired");
    const waiting = runClaimWorker(new WorkQueueClaims(client, "stop-wait"), {
      candidates: () => ["held"],
      process: async () => undefined,
      waitMs: 30_000,
      signal: stop.signal,
      continuous: true,
    });
    // Busy: a batch whose work only ends when its signal aborts.
    let sawAbort = false;
    const busy = runClaimWorker(new WorkQueueClaims(client, "stop-busy"), {
      candidates: () => ["long"],
      process: (_ids, _claim, signal) =>
        new Promise<void>((_resolve, reject) =>
          signal.addEventListener("abort", () => {
            sawAbort = true;
            reject(signal.reason as Error);
          }),
        ),
      signal: stop.signal,
      continuous: true,
    });
    await sleep(300);
    const stoppedAt = performance.now();
    stop.abort();
    const [idleStats, waitingStats, busyStats] = await Promise.all([idle, waiting, busy]);
    expect(performance.now() - stoppedAt).toBeLessThan(1_000); // not the 5 s idle, not the 30 s wait
    expect(idleStats).toEqual({ batches: 0, tasks: 0, failures: 0, givenUp: 0 });
    expect(waitingStats.batches).toBe(0);
    expect(sawAbort).toBe(true);
    // Stopping is not the task's failure: counted nowhere, its capture given back.
    expect(busyStats).toEqual({ batches: 1, tasks: 1, failures: 0, givenUp: 0 });
    if (holder.status === "acquired") await holder.release();
  });
});
