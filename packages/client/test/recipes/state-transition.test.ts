import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { StateTransitions, WorkQueueClaims, type CapturedTasks, type LockClient, type LockTimeout, type TaskState, type TaskStateStore } from "../../src/index.js";
import { recipeServer, tick, type RecipeServer } from "./support/recipe-server.js";

function captured(answer: CapturedTasks | LockTimeout): CapturedTasks {
  if (answer.status !== "acquired") throw new Error("expected a capture");
  return answer;
}

const LEASE_MS = 600;

/** The test's task table, which refuses a write fenced lower than one it already took. */
class FencedStore implements TaskStateStore {
  readonly states = new Map<string, TaskState>();
  readonly #fences = new Map<string, number>();

  constructor(tasks: Record<string, TaskState>) {
    for (const [id, state] of Object.entries(tasks)) this.states.set(id, state);
  }

  async get(id: string): Promise<TaskState | undefined> {
    await tick();
    return this.states.get(id);
  }

  async set(id: string, state: TaskState, fence: number): Promise<void> {
    await tick();
    if (fence < (this.#fences.get(id) ?? 0)) throw new Error(`stale fence for ${id}`);
    this.#fences.set(id, fence);
    this.states.set(id, state);
  }
}

describe("state transitions with retries left and named queues, over HTTP", () => {
  let env: RecipeServer;
  beforeAll(async () => {
    env = await recipeServer({ namespace: "states", leaseMs: LEASE_MS });
  });
  afterAll(() => env.close());

  const transitions = (client: LockClient, queue: string, store: TaskStateStore) => new StateTransitions(new WorkQueueClaims(client, queue), store);

  it("captures startable tasks up to max, one retry each; a captured task is in progress for everyone else", async () => {
    const store = new FencedStore({
      a: { status: "done", retriesLeft: 5 },
      b: { status: "failed", retriesLeft: 1 },
      c: { status: "done", retriesLeft: 5 },
      d: { status: "cancelled", retriesLeft: 5 },
    });
    const one = transitions(env.client(), "states", store);
    const two = transitions(env.client(), "states", store);
    const ids = ["a", "b", "c", "d"];
    const first = captured(await one.capture(ids, { max: 2 }));
    expect(first.taskIds).toEqual(["a", "b"]);
    expect(store.states.get("a")).toEqual({ status: "done", retriesLeft: 4 });
    expect(store.states.get("b")).toEqual({ status: "failed", retriesLeft: 0 });
    // c is startable; d is not (its status), so the second capture gets c only.
    const second = captured(await two.capture(ids));
    expect(second.taskIds).toEqual(["c"]);
    await first.finish("a", "done");
    await first.finish("b", "failed");
    await second.finish("c", "done");
    await first.claim.release();
    await second.claim.release();
    // b failed with no retries left: never captured again; a and c are.
    const third = captured(await two.capture(ids));
    expect(third.taskIds).toEqual(["a", "c"]);
    expect(store.states.get("b")).toEqual({ status: "failed", retriesLeft: 0 });
    await third.claim.release();
  });

  it("retries run out: a task that keeps failing is captured exactly retriesLeft times", async () => {
    const store = new FencedStore({ flaky: { status: "failed", retriesLeft: 3 } });
    const worker = transitions(env.client(), "retries", store);
    let runs = 0;
    for (let i = 0; i < 6; i++) {
      // Once the retries ran out a claim may still succeed (captures none, released in the
      // background) or find that background release not yet done (timeout): never a run.
      await using capture = await worker.capture(["flaky"]);
      if (capture.status === "timeout") continue;
      for (const id of capture.taskIds) {
        runs++;
        await capture.finish(id, "failed");
      }
    }
    expect(runs).toBe(3);
    expect(store.states.get("flaky")).toEqual({ status: "failed", retriesLeft: 0 });
  });

  it("named queues: the same task id in two queues are two tasks", async () => {
    const nightly = new FencedStore({ t1: { status: "done", retriesLeft: 1 } });
    const hourly = new FencedStore({ t1: { status: "done", retriesLeft: 1 } });
    const client = env.client();
    const a = captured(await transitions(client, "nightly", nightly).capture(["t1"]));
    const b = captured(await transitions(client, "hourly", hourly).capture(["t1"]));
    expect(a.taskIds).toEqual(["t1"]);
    expect(b.taskIds).toEqual(["t1"]);
    expect(await transitions(env.client(), "nightly", nightly).capture(["t1"])).toEqual({ status: "timeout" });
    await a.claim.release();
    await b.claim.release();
  });

  it("a worker that dies mid-run leaves nothing stuck in progress; its late write is refused by the fence", async () => {
    const store = new FencedStore({ job: { status: "done", retriesLeft: 5 } });
    const dying = env.client();
    const stale = captured(await transitions(dying, "crash", store).capture(["job"]));
    expect(stale.taskIds).toEqual(["job"]);
    await dying.close(); // it stops refreshing mid-run

    const survivor = transitions(env.client(), "crash", store);
    expect(await survivor.capture(["job"])).toEqual({ status: "timeout" }); // in progress elsewhere
    const taken = captured(await survivor.capture(["job"], { acquireTimeoutMs: 5 * LEASE_MS }));
    expect(taken.taskIds).toEqual(["job"]);
    expect(store.states.get("job")?.retriesLeft).toBe(3); // two captures, two retries spent
    await expect(stale.finish("job", "done")).rejects.toThrow(/stale fence/);
    await taken.finish("job", "done");
    await taken.claim.release();
  });
});
