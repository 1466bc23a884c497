import { startServer } from "@leasehold/server";
import { afterEach, describe, expect, it } from "vitest";
import { LockClient } from "../src/index.js";
import { captureLogger } from "./support/capture-logger.js";
import { TEST_RETRY } from "./support/harness.js";
import { tcpProxy } from "./support/tcp-proxy.js";

// Leases are counted from the moment *before the request was sent*, never from when the answer
// arrived (protocol: "a client measures that from the moment before it sent the request"). With
// every answer held back DELAY_MS on the wire, counting from the answer would keep a lock
// "held" DELAY_MS past the server's promise; these tests see that difference.

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const VALID_FOR_MS = 1_000; // leaseMs 2,000 → validForMs 1,000
const DELAY_MS = 300;
/** Polling step, and what a loaded machine may add to a timer. */
const SLACK_MS = 60;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function setup() {
  const server = await startServer({ leaseMs: 2 * VALID_FOR_MS });
  cleanups.push(() => server.close());
  const proxy = await tcpProxy(Number(new URL(server.url).port));
  const client = LockClient.http({
    baseUrl: proxy.url,
    namespace: "latency",
    logger: captureLogger().logger,
    retry: TEST_RETRY,
    requestTimeoutMs: 10_000,
    refreshTickMs: 20,
  });
  cleanups.push(() => client.close());
  // Closed before the client (cleanups run in reverse): calls stuck behind a frozen proxy then
  // fail at once instead of holding close() up until they time out.
  cleanups.push(proxy.close);
  proxy.delayAnswers(DELAY_MS);
  return { proxy, client };
}

/**
 * When the last lock or refresh request reached the proxy: the latest moment the client can have
 * sent a request its lease is counted from. (A grant that took more than half of `validForMs` to
 * arrive, as on a loaded machine, is renewed once before `lock` resolves: then that refresh is it.)
 */
function lastSent(proxy: Awaited<ReturnType<typeof tcpProxy>>): number {
  return Math.max(...proxy.forwarded("/lock"), ...proxy.forwarded("/refresh"));
}

/** When `isHeld(token)` turns false, polled every 5 ms. */
async function heldUntil(client: LockClient, token: string): Promise<number> {
  while (client.isHeld(token)) await sleep(5);
  return performance.now();
}

describe("lease timing under real latency (answers delayed on the wire)", () => {
  it("a grant's lease ends validForMs after the lock request was sent, not after its answer came", async () => {
    const { proxy, client } = await setup();
    const before = performance.now();
    const answer = await client.lock([{ descriptor: "a", mode: "exclusive" }]);
    if (answer.status !== "acquired") throw new Error("not acquired");
    const answeredAt = performance.now();
    expect(answeredAt - before).toBeGreaterThanOrEqual(DELAY_MS - 5);
    proxy.freeze(); // no refresh gets through from now on
    const sentAt = lastSent(proxy);
    const end = await heldUntil(client, answer.token);
    expect(end).toBeLessThanOrEqual(sentAt + VALID_FOR_MS + SLACK_MS);
    expect(end).toBeGreaterThanOrEqual(before + VALID_FOR_MS);
  });

  it("a refresh extends the lease from when the refresh was sent, not from its answer", async () => {
    const { proxy, client } = await setup();
    const answer = await client.lock([{ descriptor: "b", mode: "exclusive" }]);
    if (answer.status !== "acquired") throw new Error("not acquired");
    // The refresher renews after half the lease; wait for its first refresh to be answered.
    const refreshesBefore = proxy.forwarded("/refresh").length;
    while (proxy.forwarded("/refresh").length === refreshesBefore) await sleep(5);
    await sleep(DELAY_MS + 50);
    proxy.freeze(); // the next refreshes hang
    const refreshSentAt = lastSent(proxy);
    expect(client.isHeld(answer.token)).toBe(true);
    const end = await heldUntil(client, answer.token);
    expect(end).toBeLessThanOrEqual(refreshSentAt + VALID_FOR_MS + SLACK_MS);
    // …and it was extended by that refresh: beyond the grant's own lease.
    const [lockSentAt] = proxy.forwarded("/lock");
    expect(end).toBeGreaterThan(lockSentAt! + VALID_FOR_MS + 100);
  });

  it("withLock's signal fires before the lease end counted from the send", async () => {
    const { proxy, client } = await setup();
    const leaseMarginMs = 100;
    const before = performance.now();
    let sentAt = 0;
    const result = await client.withLock([{ descriptor: "c", mode: "exclusive" }], { leaseMarginMs }, async (signal) => {
      proxy.freeze();
      sentAt = lastSent(proxy);
      if (!signal.aborted) await new Promise((r) => signal.addEventListener("abort", r, { once: true }));
      return performance.now();
    });
    if (result.status !== "acquired") throw new Error("not acquired");
    // Never after the lease end; counting from the answer would fire DELAY_MS - margin after it.
    expect(result.value).toBeLessThan(sentAt + VALID_FOR_MS);
    expect(result.value).toBeGreaterThanOrEqual(before + VALID_FOR_MS - leaseMarginMs);
  });
});
