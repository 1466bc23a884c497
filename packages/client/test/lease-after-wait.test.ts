import { createLockService } from "@leasehold/server";
import { afterEach, describe, expect, it } from "vitest";
import { LockClient, type LockResponse } from "../src/index.js";
import { captureLogger } from "./support/capture-logger.js";

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function acquired(answer: LockResponse): Extract<LockResponse, { status: "acquired" }> {
  if (answer.status !== "acquired") throw new Error(`expected acquired, got ${JSON.stringify(answer)}`);
  return answer;
}

describe("a grant that waited in the queue longer than half its lease", () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  it("is held on arrival, kept refreshed, and not lost to the next waiter", async () => {
    // Leases are the subject, but the clock is real: the server's reaper and the client's
    // refresher run on their own timers, as in production.
    const service = createLockService({ leaseMs: 500 });
    const holder = LockClient.embedded(service, { namespace: "ns", logger: captureLogger().logger });
    const { logger, lines } = captureLogger();
    const waiter = LockClient.embedded(service, { namespace: "ns", logger });
    const third = LockClient.embedded(service, { namespace: "ns", logger: captureLogger().logger });
    cleanups.push(() => service.close(), () => holder.close(), () => waiter.close(), () => third.close());
    const spec = [{ descriptor: "d", mode: "exclusive" as const }];
    const first = acquired(await holder.lock(spec));
    const waiting = waiter.lock(spec, { acquireTimeoutMs: 5_000 });
    await sleep(400); // longer than the lease's validForMs / 2
    holder.tryUnlock([first.token]);
    const granted = acquired(await waiting);
    expect(waiter.isHeld(granted.token)).toBe(true);
    // Three lease periods later it is still held: the refresher kept it alive.
    const lost: string[] = [];
    const sub = waiter.lostLocks.subscribe((l) => lost.push(l.token));
    expect((await third.lock(spec, { acquireTimeoutMs: 1_500 })).status).toBe("timeout");
    sub.unsubscribe();
    expect(lost).toEqual([]);
    expect(waiter.isHeld(granted.token)).toBe(true);
    expect(lines.filter((l) => /lease/.test(JSON.stringify(l)))).toEqual([]);
  });
});
