import { LeaseholdError } from "@leasehold/protocol";
import { pino } from "pino";
import { Writable } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { createLockService } from "../../src/service/create-lock-service.js";
import type { EmbeddedLockService } from "../../src/service/embedded-lock-service.js";

let service: EmbeddedLockService;
afterEach(async () => {
  await service.close();
});

const ex = (descriptor: string) => ({ descriptor, mode: "exclusive" as const });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function capture() {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      done();
    },
  });
  return { logger: pino({ level: "warn" }, stream), lines };
}

describe("waiting, signals and timers", () => {
  it("an aborted wait rejects CANCELLED and releases everything it held", async () => {
    service = createLockService();
    const b = await service.lock("ns", { locks: [ex("b")] });
    const controller = new AbortController();
    const waiting = service.lock("ns", { locks: [ex("a"), ex("b")], acquireTimeoutMs: 10_000 }, { signal: controller.signal });
    await sleep(5);
    expect(service.snapshot("ns").descriptors.map((d) => d.descriptor)).toEqual(["a", "b"]);
    controller.abort();
    const err = await waiting.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LeaseholdError);
    expect((err as LeaseholdError).code).toBe("CANCELLED");
    expect((await service.lock("ns", { locks: [ex("a")] })).status).toBe("acquired");
    expect(service.metrics().abandonedTotal).toBe(1);
    if (b.status === "acquired") await service.unlock("ns", { tokens: [b.token] });
  });

  it("an already aborted signal changes nothing", async () => {
    service = createLockService();
    const err = await service.lock("ns", { locks: [ex("a")] }, { signal: AbortSignal.abort() }).catch((e: unknown) => e);
    expect((err as LeaseholdError).code).toBe("CANCELLED");
    expect(service.snapshot("ns").descriptors).toEqual([]);
  });

  it("joined retries share the outcome; the request is abandoned only when every caller has gone", async () => {
    service = createLockService();
    const held = await service.lock("ns", { locks: [ex("a")] });
    const c1 = new AbortController();
    const c2 = new AbortController();
    const body = { locks: [ex("a")], requestId: "r", acquireTimeoutMs: 10_000 };
    const first = service.lock("ns", body, { signal: c1.signal });
    const second = service.lock("ns", body, { signal: c2.signal });
    c1.abort();
    expect(((await first.catch((e: unknown) => e)) as LeaseholdError).code).toBe("CANCELLED");
    expect(service.snapshot("ns").waitingRequests).toBe(1);
    const third = service.lock("ns", body);
    if (held.status === "acquired") await service.unlock("ns", { tokens: [held.token] });
    const [a, b] = await Promise.all([second, third]);
    expect(a.status).toBe("acquired");
    expect(b).toEqual(a);
  });

  it("a waiter times out on a real timer", async () => {
    service = createLockService();
    await service.lock("ns", { locks: [ex("a")] });
    const started = performance.now();
    expect(await service.lock("ns", { locks: [ex("a")], acquireTimeoutMs: 50 })).toEqual({ status: "timeout" });
    expect(performance.now() - started).toBeGreaterThanOrEqual(49);
    expect(service.metrics().timeoutsTotal).toBe(1);
  });

  it("a lease not refreshed lapses on a real timer, grants the waiter and logs a warning without the token", async () => {
    const { logger, lines } = capture();
    service = createLockService({ leaseMs: 200, logger });
    const held = await service.lock("ns", { locks: [ex("a"), ex("b")] });
    if (held.status !== "acquired") throw new Error("not acquired");
    expect(held.lease.validForMs).toBe(100);
    const started = performance.now();
    const next = await service.lock("ns", { locks: [ex("a")], acquireTimeoutMs: 5_000 });
    const waited = performance.now() - started;
    expect(next.status).toBe("acquired");
    expect(waited).toBeGreaterThanOrEqual(190);
    expect(waited).toBeLessThan(1_000);
    expect((await service.refresh("ns", { tokens: [held.token] })).refreshed).toEqual([]);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 40, namespace: "ns", descriptors: 2 });
    expect(JSON.stringify(lines)).not.toContain(held.token);
  });

  it("refreshing keeps a lease alive past leaseMs", async () => {
    service = createLockService({ leaseMs: 200 });
    const held = await service.lock("ns", { locks: [ex("a")] });
    if (held.status !== "acquired") throw new Error("not acquired");
    for (let i = 0; i < 5; i++) {
      await sleep(80);
      expect((await service.refresh("ns", { tokens: [held.token] })).refreshed).toEqual([held.token]);
    }
    expect(service.metrics().leaseLapsesTotal).toBe(0);
  });

  it("close answers waiting requests UNAVAILABLE", async () => {
    service = createLockService();
    await service.lock("ns", { locks: [ex("a")] });
    const waiting = service.lock("ns", { locks: [ex("a")], acquireTimeoutMs: 10_000 });
    await sleep(1);
    await service.close();
    const err = (await waiting.catch((e: unknown) => e)) as LeaseholdError;
    expect(err.code).toBe("UNAVAILABLE");
    expect(err.message).toMatch(/shutting down/);
  });
});
