import { createLockService, type EmbeddedLockService } from "@leasehold/server";
import { afterEach, describe, expect, it, vi } from "vitest";
import { LockClient, type LockResponse } from "../src/index.js";
import { captureLogger } from "./support/capture-logger.js";
import { FakeLockService } from "./support/fake-lock-service.js";

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const ns = "batching";

function acquired(answer: LockResponse): Extract<LockResponse, { status: "acquired" }> {
  if (answer.status !== "acquired") throw new Error(`expected acquired, got ${JSON.stringify(answer)}`);
  return answer;
}

describe("lock batching, embedded", () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  function setup(): { service: EmbeddedLockService; client: LockClient } {
    const service = createLockService({});
    const client = LockClient.embedded(service, { namespace: ns, logger: captureLogger().logger, lockBatching: true });
    cleanups.push(() => service.close(), () => client.close());
    return { service, client };
  }

  it("concurrent lock() calls go through the service's lockBatch in fewer calls than callers", async () => {
    const { service, client } = setup();
    const batch = vi.spyOn(service, "lockBatch");
    const single = vi.spyOn(service, "lock");
    const answers = await Promise.all(Array.from({ length: 32 }, (_, i) => client.lock([{ descriptor: `k-${i}`, mode: "exclusive" }])));
    for (const a of answers) acquired(a);
    expect(single).not.toHaveBeenCalled();
    expect(batch.mock.calls.length).toBeGreaterThanOrEqual(1);
    expect(batch.mock.calls.length).toBeLessThan(32);
  });

  it("a waiter does not hold back later batches; FIFO among waiters; abort cancels only its entry", async () => {
    const { service, client } = setup();
    const holder = LockClient.embedded(service, { namespace: ns, logger: captureLogger().logger });
    cleanups.push(() => holder.close());
    const held = acquired(await holder.lock([{ descriptor: "busy", mode: "exclusive" }]));
    const abort = new AbortController();
    const order: string[] = [];
    const first = client.lock([{ descriptor: "busy", mode: "exclusive" }], { acquireTimeoutMs: 10_000 }).then((a) => (order.push("first"), a));
    const cancelled = client.lock([{ descriptor: "busy", mode: "exclusive" }], { acquireTimeoutMs: 10_000, signal: abort.signal });
    const second = client.lock([{ descriptor: "busy", mode: "exclusive" }], { acquireTimeoutMs: 10_000 }).then((a) => (order.push("second"), a));
    await sleep(10);
    acquired(await client.lock([{ descriptor: "free", mode: "exclusive" }])); // a later batch, answered at once
    abort.abort();
    await expect(cancelled).rejects.toMatchObject({ code: "CANCELLED" });
    await sleep(10);
    expect(service.snapshot(ns).waitingRequests).toBe(2);
    holder.tryUnlock([held.token]);
    const a = acquired(await first);
    client.tryUnlock([a.token]);
    acquired(await second);
    expect(order).toEqual(["first", "second"]);
  });

  it("a service without lockBatch is called once per lock", async () => {
    const service = new FakeLockService();
    const client = LockClient.embedded(service, { namespace: ns, logger: captureLogger().logger, lockBatching: true });
    cleanups.push(() => client.close());
    const answers = await Promise.all(Array.from({ length: 4 }, (_, i) => client.lock([{ descriptor: `k-${i}`, mode: "exclusive" }])));
    for (const a of answers) acquired(a);
    expect(service.lockCalls).toBe(4);
  });
});
