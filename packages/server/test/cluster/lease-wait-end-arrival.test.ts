import { LeaseholdError, type LockResponse } from "@leasehold/protocol";
import { afterEach, describe, expect, it } from "vitest";
import type { Coordinator } from "../../src/cluster/coordinator.js";
import { ShardTerm } from "../../src/cluster/shard-term.js";
import type { WaitingLockHandle } from "../../src/service/waiting-lock-handle.js";
import { termOptions } from "./term-fixture.js";

/**
 * A request that arrives once a term's lease-wait is due but before its timer fired (Node runs a
 * timer late; found by `pnpm sim`'s long run, seed 37203): the request that first notices the
 * wait is over starts the held-back line, and must itself join the line it started, in order,
 * not an array the line left behind. Before the fix it waited forever (only its client's timeout
 * ended it) and the next request on its descriptor was granted ahead of it.
 */
describe("a lock request arriving as a term's lease-wait ends (ShardTerm, timers that fire late)", () => {
  const terms: ShardTerm[] = [];
  afterEach(() => {
    for (const term of terms.splice(0)) term.end(new LeaseholdError("UNAVAILABLE", "test over"));
  });

  /** A term whose lease-wait ends at 2,000 ms on a clock the test moves, and whose timers never fire on their own. */
  function waitingTerm(detachAtWaitEnd = false): { term: ShardTerm; at: (ms: number) => void } {
    let now = 1_000;
    const term = new ShardTerm(termOptions({
      term: { shard: 0, epoch: 3 },
      leaderId: "leader-3",
      serverId: "s3",
      // Every namespace's bound is loaded at once (the line waits only for the lease-wait here).
      coordinator: { readBound: async () => ({ bound: 0, immutable: null, epoch: 0 }), extendBound: async () => true } as unknown as Coordinator,
      clock: () => now,
      grantsFrom: 2_000,
      detachAtWaitEnd,
    }));
    terms.push(term);
    return { term, at: (ms) => void (now = ms) };
  }

  const lock = (term: ShardTerm, requestId: string, descriptor: string) =>
    term.beginLock("ns", { requestId, locks: [{ descriptor, mode: "exclusive" }], acquireTimeoutMs: 30_000 }) as LockResponse | WaitingLockHandle;
  const settledSoon = async <T>(answer: Promise<T>): Promise<T | "still waiting"> => Promise.race([answer, new Promise<"still waiting">((r) => setTimeout(() => r("still waiting"), 50))]);

  /** Held back during the wait: a holds y, b waits behind it; then c (on x, free) arrives once the wait is due, its timer not fired. */
  async function arrivalAtWaitEnd(detachAtWaitEnd: boolean) {
    const { term, at } = waitingTerm(detachAtWaitEnd);
    const a = lock(term, "a", "y");
    const b = lock(term, "b", "y");
    expect("answer" in a && "answer" in b).toBe(true);
    await new Promise((r) => setImmediate(r)); // the namespace's bound loads meanwhile
    at(2_001);
    const c = lock(term, "c", "x");
    return { term, a, b, c };
  }
  const answerOf = (r: LockResponse | WaitingLockHandle): Promise<LockResponse> => ("answer" in r ? r.answer : Promise.resolve(r));

  it("joins the line it starts, behind the requests held back before it, and is granted in its turn", async () => {
    const { term, a, b, c } = await arrivalAtWaitEnd(false);
    expect((await settledSoon(answerOf(a))) as LockResponse).toMatchObject({ status: "acquired" });
    expect(await settledSoon(answerOf(b))).toBe("still waiting");
    // c is granted: x is free, and c is in the line that started (not left behind in a detached one).
    expect((await settledSoon(answerOf(c))) as LockResponse).toMatchObject({ status: "acquired" });
    // And a request after c on x waits behind c: first in, first out.
    const d = lock(term, "d", "x");
    expect(await settledSoon(answerOf(d))).toBe("still waiting");
  });

  it("negative control (LEASEHOLD_TEST_BREAK=arrive-as-wait-ends): c joins the detached line and is never started; d, after it on x, is granted ahead of it", async () => {
    const { term, a, c } = await arrivalAtWaitEnd(true);
    expect((await settledSoon(answerOf(a))) as LockResponse).toMatchObject({ status: "acquired" });
    expect(await settledSoon(answerOf(c))).toBe("still waiting");
    const d = lock(term, "d", "x");
    expect((await settledSoon(answerOf(d))) as LockResponse).toMatchObject({ status: "acquired" });
  });
});
