import { startServer, type RunningServer } from "@leasehold/server";
import { afterEach, describe, expect, it } from "vitest";
import { LockClient, type LostLock } from "../src/index.js";
import { captureLogger } from "./support/capture-logger.js";
import { TEST_RETRY } from "./support/harness.js";
import { tcpProxy } from "./support/tcp-proxy.js";

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function portOf(server: RunningServer): number {
  return Number(new URL(server.url).port);
}

function client(baseUrl: string): LockClient {
  const c = LockClient.http({ baseUrl, namespace: "restart", logger: captureLogger().logger, retry: TEST_RETRY });
  cleanups.push(() => c.close());
  return c;
}

async function serve(port = 0): Promise<RunningServer> {
  const server = await startServer({ port, leaseMs: 2_000 });
  cleanups.push(() => server.close());
  return server;
}

function acquired<T extends { status: string }>(answer: T): Extract<T, { status: "acquired" }> {
  if (answer.status !== "acquired") throw new Error(`expected acquired, got ${JSON.stringify(answer)}`);
  return answer as Extract<T, { status: "acquired" }>;
}

describe("over real HTTP, across server restarts", () => {
  it("reports held tokens lost once the restarted server answers (new leaderId / unknown token)", async () => {
    const first = await serve();
    const c = client(first.url);
    const lost: LostLock[] = [];
    c.lostLocks.subscribe((l) => lost.push(l));
    const held = acquired(await c.lock([{ descriptor: "r", mode: "exclusive" }]));
    await first.close();
    const second = await serve(portOf(first));
    expect(second.service.leaderId).not.toBe(held.lease.leaderId);
    const deadline = Date.now() + 3_000;
    while (lost.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    expect(lost).toHaveLength(1);
    expect(lost[0]!.token).toBe(held.token);
    expect(["leader-changed", "not-refreshed"]).toContain(lost[0]!.reason);
    expect(c.stats().lostLocks).toBe(1);
  });

  it("a waiting lock retried across a restart is granted once, by the new server", async () => {
    const first = await serve();
    const holder = client(first.url);
    const waiter = client(first.url);
    const spec = [{ descriptor: "contended", mode: "exclusive" as const }];
    acquired(await holder.lock(spec));
    const waiting = waiter.lock(spec, { acquireTimeoutMs: 20_000 });
    await new Promise((r) => setTimeout(r, 100));
    await first.close(); // the waiting request is answered 503 and retried with its requestId
    await new Promise((r) => setTimeout(r, 100)); // retries meet a refused connection meanwhile
    const second = await serve(portOf(first));
    const granted = acquired(await waiting);
    expect(granted.lease.leaderId).toBe(second.service.leaderId);
    const table = second.service.snapshot("restart");
    expect(table.heldTokens).toBe(1);
    expect(table.waitingRequests).toBe(0);
    expect(await waiter.unlock([granted.token])).toEqual([granted.token]);
    expect(second.service.snapshot("restart").heldTokens).toBe(0);
  });

  it("a grant whose answer is lost on the wire is retried with its requestId and never acquired twice", async () => {
    const server = await serve();
    const proxy = await tcpProxy(portOf(server));
    cleanups.push(proxy.close);
    const c = client(proxy.url);
    proxy.dropAnswer("/lock");
    const granted = acquired(await c.lock([{ descriptor: "once", mode: "exclusive" }]));
    expect(proxy.forwarded("/lock").length).toBe(2); // the first answer was cut off, the retry answered
    expect(server.service.snapshot("restart").heldTokens).toBe(1);
    expect(await c.unlock([granted.token])).toEqual([granted.token]);
    // Had the retry acquired a second time, the first grant would still hold the lock.
    expect(server.service.snapshot("restart").heldTokens).toBe(0);
  });
});
