import { startServer } from "@leasehold/server";
import { afterEach, describe, expect, it } from "vitest";
import { LockClient } from "../src/index.js";
import { captureLogger } from "./support/capture-logger.js";
import { TEST_RETRY } from "./support/harness.js";
import { tcpProxy } from "./support/tcp-proxy.js";

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
/** How late the server hears of the client closing its connection. */
const LATE_CLOSE_MS = 2_000;

async function until(condition: () => boolean, timeoutMs: number): Promise<boolean> {
  const end = performance.now() + timeoutMs;
  while (!condition()) {
    if (performance.now() > end) return false;
    await sleep(5);
  }
  return true;
}

describe("an aborted single lock ends its wait on the server for certain (real sockets)", () => {
  for (const lockBatching of [false, true]) {
    it(`even when the server hears of the disconnect late (lockBatching ${lockBatching})`, async () => {
      const server = await startServer({});
      cleanups.push(() => server.close());
      const proxy = await tcpProxy(Number(new URL(server.url).port));
      proxy.delayClose(LATE_CLOSE_MS);
      const logger = captureLogger().logger;
      const holder = LockClient.http({ baseUrl: server.url, namespace: "ns", logger, retry: TEST_RETRY });
      const client = LockClient.http({ baseUrl: proxy.url, namespace: "ns", logger, retry: TEST_RETRY, lockBatching });
      cleanups.push(() => holder.close(), () => client.close(), proxy.close);
      const x = [{ descriptor: "x", mode: "exclusive" as const }];
      const held = await holder.lock(x);
      if (held.status !== "acquired") throw new Error("not acquired");

      const abort = new AbortController();
      const waiting = client.lock(x, { acquireTimeoutMs: 30_000, signal: abort.signal });
      expect(await until(() => server.service.snapshot("ns").waitingRequests === 1, 5_000)).toBe(true);
      const abortedAt = performance.now();
      abort.abort();
      await expect(waiting).rejects.toMatchObject({ code: "CANCELLED" });

      // Well before the server could learn of the disconnect, the wait is gone from its queue…
      expect(await until(() => server.service.snapshot("ns").waitingRequests === 0, LATE_CLOSE_MS / 2)).toBe(true);
      expect(performance.now() - abortedAt).toBeLessThan(LATE_CLOSE_MS / 2);
      expect(server.service.metrics().abandonedTotal).toBe(1);
      // …and holds nothing: once the holder lets go, x is free at once.
      await holder.unlock([held.token]);
      expect((await holder.lock(x)).status).toBe("acquired");
      expect(server.service.snapshot("ns").heldTokens).toBe(1);
    });
  }
});
