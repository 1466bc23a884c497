import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runClaimWorker, WorkQueueClaims, type LockTimeout, type TaskClaim } from "../../src/index.js";
import { recipeServer, tick, type RecipeServer } from "./support/recipe-server.js";

const LEASE_MS = 3_000; // a crashed worker's tasks come back after this; long enough that a loaded CI machine's event-loop stalls never look like a lost claim

function claimed(answer: TaskClaim | LockTimeout): TaskClaim {
  if (answer.status !== "acquired") throw new Error("expected a claim");
  return answer;
}

/** The test's own task table: which tasks exist, which are finished, how often each ran. */
class TaskTable {
  readonly #unfinished: Set<string>;
  readonly runs = new Map<string, number>();

  constructor(count: number) {
    this.#unfinished = new Set(Array.from({ length: count }, (_, i) => `t${String(i).padStart(5, "0")}`));
    for (const id of this.#unfinished) this.runs.set(id, 0);
  }

  /** The first `k` unfinished task ids: the window a worker offers. */
  window(k: number): string[] {
    const ids: string[] = [];
    for (const id of this.#unfinished) {
      if (ids.length === k) break;
      ids.push(id);
    }
    return ids;
  }

  isFinished(id: string): boolean {
    return !this.#unfinished.has(id);
  }

  async run(id: string): Promise<void> {
    await tick(); // the task's work, during which other workers carry on
    this.runs.set(id, (this.runs.get(id) ?? 0) + 1);
    this.#unfinished.delete(id);
  }
}

describe("work-queue claims over HTTP (as-many-as-possible, READPAST-style)", () => {
  let env: RecipeServer;
  beforeAll(async () => {
    env = await recipeServer({ namespace: "queues", leaseMs: LEASE_MS });
  });
  afterAll(() => env.close());

  it("10,000 tasks, 16 workers, batches of up to 10, one worker crashing: every task runs exactly once, with no idle gap", async () => {
    const table = new TaskTable(10_000);
    const WINDOW = 200;
    // A worker that claims a batch and dies at once: its client stops refreshing, nothing is released.
    const doomedClient = env.client();
    const doomed = claimed(await new WorkQueueClaims(doomedClient, "bulk").claim(table.window(WINDOW), { max: 10 }));
    expect(doomed.taskIds).toHaveLength(10);
    const crashedAt = performance.now();
    await doomedClient.close();

    const gaps: number[] = [];
    const ranAt = new Map<string, number>();
    const clients = Array.from({ length: 4 }, () => env.client());
    const worker = async (w: number) => {
      const claims = new WorkQueueClaims(clients[w % clients.length]!, "bulk");
      let finishedAt: number | undefined;
      return runClaimWorker(claims, {
        candidates: () => {
          // From the end of the last batch to the next claim: nothing but reading the window.
          // Only the first claim after a batch counts: a later one follows a claim that found
          // nothing free (the crashed worker's tasks, before its lease lapses) and waited for it.
          if (finishedAt !== undefined) gaps.push(performance.now() - finishedAt);
          finishedAt = undefined;
          return table.window(WINDOW);
        },
        process: async (taskIds, claim) => {
          expect(taskIds.length).toBeGreaterThan(0);
          expect(taskIds.length).toBeLessThanOrEqual(10);
          for (const id of taskIds) {
            if (table.isFinished(id)) continue; // the window was stale: someone finished it meanwhile
            expect(claim.signal.aborted).toBe(false);
            await table.run(id);
            ranAt.set(id, performance.now());
          }
          finishedAt = performance.now();
        },
      });
    };
    const started = performance.now();
    const stats = await Promise.all(Array.from({ length: 16 }, (_, w) => worker(w)));
    const elapsed = performance.now() - started;

    const counts = [...table.runs.values()];
    expect(counts).toHaveLength(10_000);
    expect(counts.filter((n) => n !== 1)).toEqual([]); // exactly once, each
    expect(table.window(1)).toEqual([]);
    // Every worker took part, and the crashed worker's tasks were run by others after its lease.
    for (const s of stats) expect(s.batches).toBeGreaterThan(0);
    for (const id of doomed.taskIds) expect(ranAt.get(id)! - crashedAt).toBeGreaterThan(LEASE_MS * 0.8);
    // No sleep between batches: the next claim left as soon as the last batch was done.
    expect(gaps.length).toBeGreaterThan(900);
    expect(Math.max(...gaps)).toBeLessThan(100);
    expect(elapsed).toBeLessThan(30_000);
  });

  it("a crashed worker's claimed tasks become claimable again after its lease, not before", async () => {
    const ids = ["a", "b", "c"];
    const crashed = env.client();
    const claim = claimed(await new WorkQueueClaims(crashed, "crash").claim(ids));
    expect(claim.taskIds).toEqual(ids);
    const crashedAt = performance.now();
    await crashed.close(); // stops refreshing; nothing is unlocked

    const survivor = new WorkQueueClaims(env.client(), "crash");
    expect(await survivor.claim(ids)).toEqual({ status: "timeout" }); // held: skipped, not waited for
    const again = claimed(await survivor.claim(ids, { acquireTimeoutMs: 5 * LEASE_MS }));
    const after = performance.now() - crashedAt;
    expect(after).toBeGreaterThan(LEASE_MS * 0.8);
    expect(after).toBeLessThan(LEASE_MS + 500);
    // The server frees every descriptor of the lapsed token before it wakes waiters, so the
    // waiting claim gets all three at once.
    expect(again.taskIds).toEqual(ids);
    const rest = await survivor.claim(ids);
    expect(rest).toEqual({ status: "timeout" });
    expect(again.taskFence(again.taskIds[0]!)).toBeGreaterThan(claim.taskFence(again.taskIds[0]!)); // a stale claimer can be refused
    expect(await again.release()).toBe(true);
    if (rest.status === "acquired") expect(await rest.release()).toBe(true);
  });

  it("skips held tasks instead of queueing behind them, takes at most max, and keeps queues apart", async () => {
    const client = env.client();
    const q = new WorkQueueClaims(client, "skip");
    const first = claimed(await q.claim(["1", "2", "3", "4", "5"], { max: 2 }));
    expect(first.taskIds).toEqual(["1", "2"]);
    const before = performance.now();
    const second = claimed(await q.claim(["1", "2", "3", "4", "5"], { max: 10 }));
    expect(performance.now() - before).toBeLessThan(500);
    expect(second.taskIds).toEqual(["3", "4", "5"]);
    // The same ids in another queue are other tasks.
    const other = claimed(await new WorkQueueClaims(client, "skip-other").claim(["1", "2"]));
    expect(other.taskIds).toEqual(["1", "2"]);
    expect(await q.claim([])).toEqual({ status: "timeout" });
    await expect(q.claim(["x"], { max: 0 })).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
    for (const c of [first, second, other]) await c.release();
  });

  it("a waiting claim is answered as soon as a candidate comes free, with no polling", async () => {
    const q = new WorkQueueClaims(env.client(), "wake");
    const holder = claimed(await q.claim(["only"]));
    const waiting = q.claim(["only"], { acquireTimeoutMs: 5_000 });
    await new Promise((r) => setTimeout(r, 100));
    const releasedAt = performance.now();
    await holder.release();
    expect(claimed(await waiting).taskIds).toEqual(["only"]);
    expect(performance.now() - releasedAt).toBeLessThan(300);
  });
});
