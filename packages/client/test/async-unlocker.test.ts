import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { LockClient } from "../src/index.js";
import { captureLogger } from "./support/capture-logger.js";
import { FakeLockService } from "./support/fake-lock-service.js";

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function setup(configure: (s: FakeLockService) => void = () => undefined) {
  const service = new FakeLockService();
  configure(service);
  const log = captureLogger();
  const client = LockClient.embedded(service, { namespace: "ns", logger: log.logger });
  return { service, client, log };
}

describe("asynchronous batched unlocker", () => {
  it("safety: only enqueued tokens are ever unlocked, across random interleavings", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.array(fc.uuid(), { minLength: 0, maxLength: 5 }), fc.nat(3)), { maxLength: 30 }),
        async (batches) => {
          const { service, client } = setup((s) => (s.unlockDelayMs = 2));
          const enqueued = new Set<string>();
          await Promise.all(
            batches.map(async ([tokens, delay]) => {
              await sleep(delay);
              for (const t of tokens) enqueued.add(t);
              client.tryUnlock(tokens);
            }),
          );
          await client.close();
          for (const t of service.unlockedTokens) expect(enqueued.has(t)).toBe(true);
          expect(new Set(service.unlockedTokens)).toEqual(enqueued);
          expect(service.maxUnlockInFlight).toBeLessThanOrEqual(1);
        },
      ),
      { numRuns: 25 },
    );
  });

  it("liveness: 64 concurrent enqueuers, 10,000 tokens, all unlocked, never two calls in flight", async () => {
    const { service, client } = setup((s) => (s.unlockDelayMs = 3));
    const all: string[] = [];
    await Promise.all(
      Array.from({ length: 64 }, async (_, worker) => {
        for (let i = worker; i < 10_000; i += 64) {
          const token = `t-${i}`;
          all.push(token);
          client.tryUnlock([token]);
          if (Math.random() < 0.3) await sleep(Math.random() * 2);
        }
      }),
    );
    await client.close();
    expect(all).toHaveLength(10_000);
    expect(new Set(service.unlockedTokens)).toEqual(new Set(all));
    expect(service.maxUnlockInFlight).toBe(1);
    const stats = client.stats();
    expect(stats.tokensEnqueued).toBe(10_000);
    // Batching happened: far fewer calls than tokens.
    expect(stats.unlockCalls).toBeLessThan(10_000);
    expect(stats.unlockCalls).toBe(service.unlockCalls.length);
    expect(stats.tokensPerUnlockCall.reduce((sum, b) => sum + b.count, 0)).toBe(stats.unlockCalls);
  });

  it("no starvation: flushes keep happening under a continuous stream of enqueuers", async () => {
    const { service, client } = setup((s) => (s.unlockDelayMs = 2));
    let stop = false;
    let n = 0;
    // Every producer enqueues a few tokens per turn of the event loop: there is always an enqueuer
    // between any two flushes, so an unfair lock would let them starve the flusher.
    const producers = Array.from({ length: 16 }, async () => {
      while (!stop) {
        for (let i = 0; i < 5; i++) client.tryUnlock([`s-${n++}`]);
        await new Promise((r) => setImmediate(r));
      }
    });
    const seen: number[] = [];
    for (let i = 0; i < 10; i++) {
      await sleep(20);
      seen.push(service.unlockCalls.length);
    }
    stop = true;
    await Promise.all(producers);
    await client.close();
    // Calls kept landing while enqueuers never paused for long.
    for (let i = 1; i < seen.length; i++) expect(seen[i]!).toBeGreaterThan(seen[i - 1]!);
    expect(new Set(service.unlockedTokens).size).toBe(n);
  });

  it("tryUnlock never throws and returns at once when the service fails or hangs, or the input is bad", async () => {
    for (const behavior of ["fail", "hang"] as const) {
      const { service, client } = setup((s) => (s.unlockBehavior = behavior));
      const started = performance.now();
      for (let i = 0; i < 1000; i++) client.tryUnlock([`x-${i}`]);
      client.tryUnlock(null as unknown as string[]);
      client.tryUnlock([42, "", null] as unknown as string[]);
      client.tryUnlock("not-an-array" as unknown as string[]);
      expect(performance.now() - started).toBeLessThan(200);
      await sleep(20);
      if (behavior === "hang") {
        expect(service.unlockCalls.length).toBe(1); // one call hangs; the rest waits behind it
        service.releaseHangs();
        await sleep(5);
        service.releaseHangs();
      }
      await client.close();
    }
  });

  it("a failed unlock call is logged once, with its token count and never the tokens", async () => {
    const { service, client, log } = setup((s) => (s.unlockBehavior = "fail"));
    client.tryUnlock(["secret-a", "secret-b", "secret-c"]);
    await client.close();
    expect(service.unlockCalls).toHaveLength(1);
    const warnings = log.lines.filter((l) => l.level === 40);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ tokenCount: 3, code: "UNAVAILABLE" });
    expect(log.text()).not.toContain("secret");
    expect(client.stats().unlockFailures).toBe(1);
  });

  it("a token passed to tryUnlock is never refreshed again, even when its unlock call fails", async () => {
    const service = new FakeLockService();
    service.validForMs = 200;
    service.unlockBehavior = "fail";
    const { logger } = captureLogger();
    const client = LockClient.embedded(service, { namespace: "ns", logger, refreshTickMs: 10 });
    const a = await client.lock([{ descriptor: "a", mode: "exclusive" }]);
    const b = await client.lock([{ descriptor: "b", mode: "exclusive" }]);
    if (a.status !== "acquired" || b.status !== "acquired") throw new Error("not acquired");
    await sleep(250);
    expect(service.refreshCalls.some((c) => c.includes(a.token))).toBe(true);
    client.tryUnlock([a.token]);
    const callsAtUnlock = service.refreshCalls.length;
    await sleep(400);
    expect(service.refreshCalls.length).toBeGreaterThan(callsAtUnlock); // b is still refreshed
    expect(service.refreshCalls.slice(callsAtUnlock).some((c) => c.includes(a.token))).toBe(false);
    expect(service.unlockCalls.flat()).toContain(a.token);
    await client.close();
  });
});
