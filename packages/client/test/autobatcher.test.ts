import { LeaseholdError } from "@leasehold/protocol";
import { describe, expect, it } from "vitest";
import { Autobatcher, LockClient } from "../src/index.js";
import { captureLogger } from "./support/capture-logger.js";
import { FakeLockService } from "./support/fake-lock-service.js";

describe("Autobatcher", () => {
  it("sends at once when idle, then coalesces everything that arrives while a call is in flight", async () => {
    const batches: number[][] = [];
    let inFlight = 0;
    let maxInFlight = 0;
    const batcher = new Autobatcher<number, number>(async (items) => {
      batches.push([...items]);
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      await new Promise((r) => setTimeout(r, 5));
      inFlight--;
      return items.map((x) => x * 2);
    });
    const results = await Promise.all(Array.from({ length: 100 }, (_, i) => batcher.submit(i)));
    expect(results).toEqual(Array.from({ length: 100 }, (_, i) => i * 2));
    expect(batches[0]).toEqual([0]);
    expect(batches[1]).toHaveLength(99);
    expect(maxInFlight).toBe(1);
  });

  it("rejects every member of a failed batch, and later batches still run", async () => {
    let fail = true;
    const batcher = new Autobatcher<number, number>(async (items) => {
      if (fail) throw new LeaseholdError("UNAVAILABLE", "down");
      return items;
    });
    await expect(batcher.submit(1)).rejects.toMatchObject({ code: "UNAVAILABLE" });
    fail = false;
    await expect(batcher.submit(2)).resolves.toBe(2);
  });

  it("an aborted caller rejects with CANCELLED; the others get their answers", async () => {
    const batcher = new Autobatcher<number, number>(async (items) => {
      await new Promise((r) => setTimeout(r, 10));
      return items;
    });
    const controller = new AbortController();
    const a = batcher.submit(1, { signal: controller.signal });
    const b = batcher.submit(2);
    controller.abort();
    await expect(a).rejects.toMatchObject({ code: "CANCELLED" });
    await expect(b).resolves.toBe(2);
  });
});

describe("LockClient autobatching", () => {
  function client() {
    const service = new FakeLockService();
    return { service, client: LockClient.embedded(service, { namespace: "ns", logger: captureLogger().logger }) };
  }

  it("concurrent freshTimestamp calls share calls, get distinct values, and respect 10,000 per call", async () => {
    const { service, client: c } = client();
    const singles = await Promise.all(Array.from({ length: 500 }, () => c.freshTimestamp()));
    expect(new Set(singles).size).toBe(500);
    expect(service.timestampCalls.length).toBeLessThan(10);
    service.timestampCalls = [];
    const ranges = await Promise.all([c.freshTimestamps(9_000), c.freshTimestamps(9_000), c.freshTimestamps(3)]);
    for (const call of service.timestampCalls) expect(call).toBeLessThanOrEqual(10_000);
    const values = ranges.flatMap((r) => Array.from({ length: r.count }, (_, i) => r.start + i));
    expect(new Set(values).size).toBe(18_003);
    await expect(c.freshTimestamps(10_001)).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
    await c.close();
  });

  it("concurrent startTransaction calls share calls of at most 1,000 and every token is refreshed", async () => {
    const { service, client: c } = client();
    const txns = await Promise.all(Array.from({ length: 1_500 }, () => c.startTransaction()));
    expect(new Set(txns.map((t) => t.token)).size).toBe(1_500);
    for (const call of service.transactionCalls) expect(call).toBeLessThanOrEqual(1_000);
    expect(service.transactionCalls.length).toBeLessThan(20);
    for (const t of txns) expect(t.immutableTimestamp).toBeLessThanOrEqual(t.startTimestamp);
    c.tryUnlock(txns.map((t) => t.token));
    await c.close();
    expect(new Set(service.unlockedTokens).size).toBe(1_500);
  });

  it("concurrent refresh calls share one call and each caller sees only its own tokens", async () => {
    const { service, client: c } = client();
    const a = await c.lock([{ descriptor: "a", mode: "exclusive" }]);
    const b = await c.lock([{ descriptor: "b", mode: "exclusive" }]);
    if (a.status !== "acquired" || b.status !== "acquired") throw new Error("not acquired");
    service.refreshCalls.length = 0;
    const [ra, rb, rx] = await Promise.all([c.refresh([a.token]), c.refresh([b.token]), c.refresh(["unknown"])]);
    expect(ra.refreshed).toEqual([a.token]);
    expect(rb.refreshed).toEqual([b.token]);
    expect(rx.refreshed).toEqual([]);
    expect(service.refreshCalls.length).toBeLessThanOrEqual(2);
    await c.close();
  });
});
