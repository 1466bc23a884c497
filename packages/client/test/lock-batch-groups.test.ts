import type { LockBatchRequest, LockBatchResultListener, LockResponse } from "@leasehold/protocol";
import { describe, expect, it } from "vitest";
import type { LockBatchCallOptions } from "../src/http-lock-service.js";
import { LockBatcher, MAX_BATCHES_IN_TRANSIT } from "../src/index.js";
import { FakeLockService } from "./support/fake-lock-service.js";

/** A grant of one exclusive lock. */
const grant = (token: string, leaderId: string): LockResponse => ({
  status: "acquired",
  token,
  lease: { leaderId, validForMs: 5_000 },
  acquired: [{ descriptor: "d", mode: "exclusive", fencingToken: 1 }],
});

const macrotask = (): Promise<void> => new Promise((r) => setImmediate(r));

/**
 * A service whose batch answers come back a macrotask after they were sent, all lines at once
 * (as a server that grants every entry at once writes them), except for the batches `piecemeal`
 * picks: those are answered in `pieces` parts, each a macrotask after the one before.
 */
class ScriptedBatches extends FakeLockService {
  readonly sizes: number[] = [];
  piecemeal: (call: number) => boolean = () => false;
  pieces = 3;
  async lockBatch(_ns: string, body: LockBatchRequest, onResult: LockBatchResultListener, options?: LockBatchCallOptions): Promise<void> {
    const call = this.sizes.push(body.requests.length) - 1;
    const answer = (index: number): void => {
      onResult({ index, result: grant(`t${call}-${index}`, this.leaderId) });
    };
    await macrotask();
    options?.onStarted?.();
    const n = body.requests.length;
    const parts = this.piecemeal(call) ? this.pieces : 1;
    for (let p = 0; p < parts; p++) {
      if (p > 0) await macrotask();
      for (let i = Math.floor((p * n) / parts); i < Math.floor(((p + 1) * n) / parts); i++) answer(i);
    }
  }
}

/** A service whose batch answers the test gives by hand: the head, then every line. */
class ManualBatches extends FakeLockService {
  readonly calls: { size: number; ids: string[]; head: () => void; answer: () => void }[] = [];
  lockBatch(_ns: string, body: LockBatchRequest, onResult: LockBatchResultListener, options?: LockBatchCallOptions): Promise<void> {
    return new Promise((resolve) => {
      let headed = false;
      const head = (): void => {
        if (headed) return;
        headed = true;
        options?.onStarted?.();
      };
      const answer = (): void => {
        head();
        body.requests.forEach((_, index) => onResult({ index, result: grant(`m${this.calls.length}-${index}`, this.leaderId) }));
        resolve();
      };
      this.calls.push({ size: body.requests.length, ids: body.requests.map((r) => r.requestId ?? ""), head, answer });
    });
  }
}

/** `callers` loops of `rounds` lock calls each through one batcher; answers the batch sizes sent. */
async function run(service: ScriptedBatches, callers: number, rounds: number): Promise<number[]> {
  const batcher = new LockBatcher({ service, namespace: "ns", release: () => undefined, now: () => performance.now() });
  await Promise.all(
    Array.from({ length: callers }, async (_, c) => {
      for (let r = 0; r < rounds; r++) {
        const answer = await batcher.lock("ns", { requestId: `c${c}-r${r}`, locks: [{ descriptor: `c${c}`, mode: "exclusive" }] });
        expect(answer.status).toBe("acquired");
      }
    }),
  );
  return service.sizes;
}

describe("lock batches: callers answered together stay together, and split groups merge again", () => {
  it("64 busy callers go as two batches of 32 from the start", async () => {
    const sizes = await run(new ScriptedBatches(), 64, 30);
    expect(sizes.slice(0, 2)).toEqual([32, 32]);
    expect(sizes.every((s) => s === 32)).toBe(true);
    expect(sizes.reduce((a, b) => a + b, 0)).toBe(64 * 30);
  });

  it("after the first batches are answered piecemeal (a cold namespace on a new leader), the groups merge back into two batches of 32", async () => {
    const service = new ScriptedBatches();
    // Both first batches answered in three parts: six groups of callers ask again at six moments.
    service.piecemeal = (call) => call < 2;
    const sizes = await run(service, 64, 40);
    expect(sizes.reduce((a, b) => a + b, 0)).toBe(64 * 40);
    // Right after the hiccup the batches are small; within a few rounds they are whole again.
    expect(Math.min(...sizes.slice(2, 8))).toBeLessThan(32);
    // From round 5 on, until callers that lost a round to the hiccup finish after the others.
    const settled = sizes.slice(8, -8);
    expect(settled.length).toBeGreaterThan(50);
    expect(settled).toEqual(settled.map(() => 32));
  });

  it("a queue longer than the batch in transit leaves as an even share of both; the rest waits for that batch's head", async () => {
    const service = new ManualBatches();
    const batcher = new LockBatcher({ service, namespace: "ns", release: () => undefined, now: () => performance.now() });
    const lock = (id: string): Promise<LockResponse> => batcher.lock("ns", { requestId: id, locks: [{ descriptor: id, mode: "exclusive" }] });
    const first = Array.from({ length: 16 }, (_, i) => lock(`a${i}`));
    await macrotask();
    expect(service.calls.map((c) => c.size)).toEqual([8, 8]); // nothing in transit: two halves
    service.calls[0]!.answer();
    await Promise.all(first.slice(0, 8));
    // One batch of 8 in transit; 40 more callers: 24 leave now, 16 wait for the next slot.
    const burst = Array.from({ length: 40 }, (_, i) => lock(`b${i}`));
    await macrotask();
    expect(service.calls.map((c) => c.size)).toEqual([8, 8, 24]);
    service.calls[1]!.head();
    await macrotask();
    expect(service.calls.map((c) => c.size)).toEqual([8, 8, 24, 16]);
    for (const call of service.calls.slice(1)) call.answer();
    for (const answer of await Promise.all([...first, ...burst])) expect(answer.status).toBe("acquired");
    // Order kept: the held-back entries are the last 16 of the burst.
    expect(service.calls[3]!.ids).toEqual(Array.from({ length: 16 }, (_, i) => `b${24 + i}`));
  });

  it("holds at most MAX_BATCHES_IN_TRANSIT batches between sending and the answer's head", async () => {
    let inTransit = 0;
    let most = 0;
    const service = new (class extends ScriptedBatches {
      override async lockBatch(ns: string, body: LockBatchRequest, onResult: LockBatchResultListener, options?: LockBatchCallOptions): Promise<void> {
        most = Math.max(most, ++inTransit);
        return super.lockBatch(ns, body, onResult, { ...options, onStarted: () => (inTransit--, options?.onStarted?.()) });
      }
    })();
    service.piecemeal = (call) => call % 5 === 0;
    await run(service, 64, 20);
    expect(most).toBe(MAX_BATCHES_IN_TRANSIT);
  });
});
