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

const VALID_FOR_MS = 1_000; // leaseMs 2,000 → validForMs 1,000

async function setup() {
  const server = await startServer({ leaseMs: 2 * VALID_FOR_MS });
  cleanups.push(() => server.close());
  const proxy = await tcpProxy(Number(new URL(server.url).port));
  const client = LockClient.http({ baseUrl: proxy.url, namespace: "lease", logger: captureLogger().logger, retry: TEST_RETRY, requestTimeoutMs: 5_000 });
  cleanups.push(() => client.close());
  // The proxy closes first: a frozen one would hold the client's last calls for their whole timeout.
  cleanups.push(proxy.close);
  return { server, proxy, client };
}

async function abortedAt(signal: AbortSignal): Promise<number> {
  if (signal.aborted) return performance.now();
  return new Promise((resolve) => signal.addEventListener("abort", () => resolve(performance.now()), { once: true }));
}

describe("withLock and the lease", () => {
  for (const failure of ["refreshes hang (network stalls)", "the server stops"] as const) {
    it(`aborts the work before the lease ends when ${failure}`, async () => {
      const { server, proxy, client } = await setup();
      const beforeSent = performance.now(); // earlier than the moment the lock request was sent
      let reason: unknown;
      const result = await client.withLock([{ descriptor: "job", mode: "exclusive" }], {}, async (signal) => {
        if (failure === "the server stops") await server.close();
        else proxy.freeze();
        const at = await abortedAt(signal);
        reason = signal.reason;
        return at;
      });
      if (result.status !== "acquired") throw new Error("not acquired");
      const leaseEnd = beforeSent + VALID_FOR_MS;
      expect(result.value).toBeLessThan(leaseEnd);
      // …and not for some unrelated reason long before: the default margin is a fifth of the lease.
      expect(result.value).toBeGreaterThan(leaseEnd - VALID_FOR_MS / 5 - 150);
      expect(reason).toMatchObject({ code: "UNAVAILABLE", details: { reason: "lease-expiring" } });
    });
  }

  it("keeps the work's signal quiet while refreshes succeed, and aborts at once when the lock is lost", async () => {
    const { server, client } = await setup();
    const result = await client.withLock([{ descriptor: "steady", mode: "exclusive" }], {}, async (signal, lock) => {
      await new Promise((r) => setTimeout(r, 2_500));
      expect(signal.aborted).toBe(false);
      // Release the lock behind the client's back: the next refresh finds it gone.
      await server.service.unlock("lease", { tokens: [lock.token] });
      const at = await abortedAt(signal);
      return { at, reason: signal.reason as { details: { reason: string } } };
    });
    if (result.status !== "acquired") throw new Error("not acquired");
    expect(result.value.reason.details.reason).toBe("not-refreshed");
  });
});
