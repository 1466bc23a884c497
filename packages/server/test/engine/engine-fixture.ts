import type { LockRequest, LockSpec } from "@leasehold/protocol";
import { LockEngine, type LockAttempt, type LockEngineOptions } from "../../src/engine/lock-engine.js";
import type { SettledOutcome } from "../../src/engine/lock-table.js";
import { PendingLock } from "../../src/engine/pending-lock.js";
import { createCountingTokenSource } from "../../src/engine/token-source.js";

/** A LockEngine on a fake clock with predictable tokens, recording every settlement and lapse. */
export function makeEngine(options: LockEngineOptions = {}) {
  let now = 1_000;
  const outcomes = new Map<PendingLock, SettledOutcome>();
  /** Every settled pending request, in the order the engine settled them. */
  const settledOrder: PendingLock[] = [];
  const lapses: { namespace: string; descriptors: number }[] = [];
  const engine = new LockEngine({
    clock: () => now,
    leaderId: "leader-1",
    leaseMs: 1_000,
    tokenSource: createCountingTokenSource(),
    onSettled: (pending, outcome) => {
      if (outcomes.has(pending)) throw new Error("settled twice");
      outcomes.set(pending, outcome);
      settledOrder.push(pending);
    },
    onLeaseLapse: (namespace, descriptors) => lapses.push({ namespace, descriptors }),
    ...options,
  });
  return {
    engine,
    lapses,
    settledOrder,
    /** Move the fake clock and let the engine reap. */
    tick(ms: number): void {
      now += ms;
      engine.advance();
    },
    now: () => now,
    /** What a pending request settled with, or undefined while it waits. */
    outcome(attempt: LockAttempt | PendingLock | { readonly status: string }): SettledOutcome | undefined {
      if (!(attempt instanceof PendingLock)) throw new Error(`not pending: ${attempt.status}`);
      return outcomes.get(attempt);
    },
  };
}

export const x = (descriptor: string): LockSpec => ({ descriptor, mode: "exclusive" });
export const s = (descriptor: string): LockSpec => ({ descriptor, mode: "shared" });
export const p = (descriptor: string, limit: number): LockSpec => ({ descriptor, mode: "permit", limit });

/** A lock request body. */
export function req(locks: LockSpec[], extra: Partial<LockRequest> = {}): LockRequest {
  return { locks, ...extra };
}

/** The token of an acquired answer (fails the test otherwise). */
export function tokenOf(answer: LockAttempt | SettledOutcome | undefined): string {
  if (answer === undefined || answer instanceof Error || answer.status !== "acquired") {
    throw new Error(`expected acquired, got ${answer instanceof Error ? answer.message : JSON.stringify(answer)}`);
  }
  return answer.token;
}

/** Descriptors of an acquired answer, in answer order. */
export function descriptorsOf(answer: LockAttempt | SettledOutcome | undefined): string[] {
  if (answer === undefined || answer instanceof Error || answer.status !== "acquired") return [];
  return answer.acquired.map((a) => a.descriptor);
}
