import { LeaseholdError, type LockResponse } from "@leasehold/protocol";
import { afterEach, describe, expect, it } from "vitest";
import type { Coordinator } from "../../../src/cluster/coordinator.js";
import { ShardTerm } from "../../../src/cluster/shard-term.js";
import type { WaitingLockHandle } from "../../../src/service/waiting-lock-handle.js";
import { termOptions } from "../term-fixture.js";

/**
 * A request that reaches a term while a balance hand-over has its gate shut (`pauseForHandOver`),
 * for a namespace whose timestamp bound this term has not loaded yet (found by `pnpm sim`, seed
 * 1266 of session 20's long run). The hand-over's final entry already holds the places it carries
 * to the taker: a request held back now could not be among them. It must be refused at once, as
 * the engine refuses one for a namespace already loaded ("being handed over; retry shortly"), so
 * that it never takes a place the taker will not keep. Before the fix it waited in the term's
 * held-back line, was told to re-send when the term ended, and found its place gone at the taker:
 * a later request on its descriptor that reached the taker first was granted ahead of it.
 */
describe("a lock request arriving at a term paused for a balance hand-over (ShardTerm)", () => {
  const terms: ShardTerm[] = [];
  afterEach(() => {
    for (const term of terms.splice(0)) term.end(new LeaseholdError("UNAVAILABLE", "test over"));
  });

  /** A serving term (no lease-wait) whose namespaces' bounds finish loading only when `loadBounds` is called (never, by default). */
  function servingTerm(holdWhileHandingOver = false, bounds: { loadBounds?: () => void } = {}): ShardTerm {
    const waiting: (() => void)[] = [];
    bounds.loadBounds = () => {
      for (const resolve of waiting.splice(0)) resolve();
    };
    const term = new ShardTerm(termOptions({
      term: { shard: 1, epoch: 4 },
      leaderId: "leader-4",
      serverId: "s2",
      coordinator: {
        readBound: () => new Promise((resolve) => waiting.push(() => resolve({ bound: 0, immutable: null, epoch: 0 }))),
        extendBound: async () => true,
      } as unknown as Coordinator,
      clock: () => 1_000,
      grantsFrom: 0,
      holdWhileHandingOver,
    }));
    terms.push(term);
    return term;
  }

  const lock = (term: ShardTerm, requestId: string): LockResponse | WaitingLockHandle =>
    term.beginLock("ns-b", { requestId, locks: [{ descriptor: "x", mode: "shared" }], acquireTimeoutMs: 3_000 }) as LockResponse | WaitingLockHandle;
  const refusal = (begin: () => unknown): unknown => {
    try {
      return begin();
    } catch (err) {
      return err;
    }
  };

  it("is held back while the term serves (its namespace's bound loading), and refused once a hand-over shut the gate", () => {
    const term = servingTerm();
    expect("answer" in lock(term, "before")).toBe(true);
    term.pauseForHandOver();
    const answer = refusal(() => lock(term, "during"));
    expect(answer).toBeInstanceOf(LeaseholdError);
    expect(answer).toMatchObject({ code: "UNAVAILABLE", message: expect.stringContaining("being handed over") });
    // The places the hand-over carries are the ones taken before it shut the gate.
    expect(Object.values(term.heldBackPlaces()).flat().map((p) => p.requestId)).toEqual(["before"]);
    // A wait-for-locks is refused the same way.
    expect(refusal(() => term.beginWaitForLocks("ns-b", { locks: [{ descriptor: "x", mode: "shared" }], acquireTimeoutMs: 3_000 }))).toMatchObject({ code: "UNAVAILABLE" });
    // An abandoned hand-over reopens the line.
    term.resumeAfterHandOver();
    expect("answer" in lock(term, "after")).toBe(true);
  });

  const settledSoon = async <T>(answer: Promise<T>): Promise<T | "still waiting"> => Promise.race([answer.catch((err: unknown) => err as T), new Promise<"still waiting">((r) => setTimeout(() => r("still waiting"), 50))]);

  /** "before" is held back (its bound loading) when a balance hand-over shuts the gate; the bound loads during the pause. */
  async function boundLoadsDuringPause(holdWhileHandingOver: boolean) {
    const bounds: { loadBounds?: () => void } = {};
    const term = servingTerm(holdWhileHandingOver, bounds);
    const before = lock(term, "before") as WaitingLockHandle;
    expect("answer" in before).toBe(true);
    term.pauseForHandOver();
    bounds.loadBounds!();
    await new Promise((r) => setImmediate(r));
    return { term, before };
  }

  it("keeps its held-back line whole while the gate is shut for the hand-over, and starts it, in order, when an abandoned hand-over reopens the gate", async () => {
    const { term, before } = await boundLoadsDuringPause(false);
    // Its place stays in the line (and in what the hand-over carries): not started into the shut gate, where it would be refused.
    expect(await settledSoon(before.answer)).toBe("still waiting");
    expect(Object.values(term.heldBackPlaces()).flat().map((p) => p.requestId)).toEqual(["before"]);
    term.resumeAfterHandOver();
    expect((await settledSoon(before.answer)) as LockResponse).toMatchObject({ status: "acquired" });
  });

  it("negative control (LEASEHOLD_TEST_BREAK=hold-while-handing-over): a request takes a place in the held-back line the hand-over does not carry, and a line whose bound loads during the pause starts into the shut gate and is refused", async () => {
    const term = servingTerm(true);
    term.pauseForHandOver();
    expect("answer" in (refusal(() => lock(term, "during")) as object)).toBe(true);
    const { before } = await boundLoadsDuringPause(true);
    expect(await settledSoon(before.answer)).toMatchObject({ code: "UNAVAILABLE", message: expect.stringContaining("being handed over") });
  });
});
