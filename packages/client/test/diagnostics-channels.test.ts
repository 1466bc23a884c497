import { subscribe, unsubscribe } from "node:diagnostics_channel";
import { startServer } from "@leasehold/server";
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  CLIENT_CHANNELS,
  LockClient,
  tokenFingerprint,
  type ClientLockErrorMessage,
  type ClientLockGrantedMessage,
  type ClientLockLostMessage,
  type ClientLockReleaseMessage,
  type ClientLockRequestMessage,
  type ClientRefreshMessage,
  type ClientUnlockFlushMessage,
  type LockAcquiredResponse,
  type LockResponse,
} from "../src/index.js";
import { clientMessages } from "../src/client-diagnostics.js";
import { captureLogger } from "./support/capture-logger.js";
import { TEST_RETRY } from "./support/harness.js";

type ChannelKey = keyof typeof CLIENT_CHANNELS;

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
  vi.restoreAllMocks();
});

/** Subscribe to every client channel; `events` collects [channel key, message] in publish order. */
function record(): Array<[ChannelKey, unknown]> {
  const events: Array<[ChannelKey, unknown]> = [];
  for (const key of Object.keys(CLIENT_CHANNELS) as ChannelKey[]) {
    const listener = (message: unknown): void => void events.push([key, message]);
    subscribe(CLIENT_CHANNELS[key], listener);
    cleanups.push(() => unsubscribe(CLIENT_CHANNELS[key], listener));
  }
  return events;
}

const of = <T>(events: Array<[ChannelKey, unknown]>, key: ChannelKey): T[] => events.filter(([k]) => k === key).map(([, m]) => m as T);

async function setup(options: { leaseMs?: number } = {}) {
  const server = await startServer(options);
  const clients: LockClient[] = [];
  cleanups.push(() => server.close());
  const client = (extra: { refreshIntervalMs?: number; refreshTickMs?: number } = {}): LockClient => {
    const c = LockClient.http({ baseUrl: server.url, namespace: "diag", logger: captureLogger().logger, retry: TEST_RETRY, ...extra });
    clients.push(c);
    cleanups.push(() => c.close());
    return c;
  };
  return { server, client };
}

const until = async (check: () => boolean, what: string): Promise<void> => {
  const end = Date.now() + 5_000;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
};

const acquired = (answer: LockResponse): LockAcquiredResponse => {
  if (answer.status !== "acquired") throw new Error(`expected a grant, got ${answer.status}`);
  return answer;
};

describe("client diagnostics channels, over HTTP", () => {
  it("a granted lock: lock:request then lock:granted, sharing the request object, with a fingerprint and never the token", async () => {
    const { client } = await setup();
    const a = client();
    const events = record();
    const answer = acquired(await a.lock([{ descriptor: "doc-1", mode: "exclusive" }], { acquireTimeoutMs: 1_000, requestId: "req-1" }));
    const [request] = of<ClientLockRequestMessage>(events, "lockRequest");
    const [granted] = of<ClientLockGrantedMessage>(events, "lockGranted");
    expect(request).toEqual({ namespace: "diag", requestId: "req-1", locks: [{ descriptor: "doc-1", mode: "exclusive" }], acquireTimeoutMs: 1_000 });
    expect(granted?.request).toBe(request);
    expect(granted).toMatchObject({ namespace: "diag", requestId: "req-1", acquired: answer.acquired, lease: answer.lease });
    expect(granted?.tokenFingerprint).toBe(tokenFingerprint(answer.token));
    expect(granted?.tokenFingerprint).toMatch(/^[0-9a-f]{16}$/);
    expect(granted?.waitMs).toBeGreaterThanOrEqual(0);
    expect(events.map(([k]) => k)).toEqual(["lockRequest", "lockGranted"]);
    expect(JSON.stringify(events.map(([, m]) => ({ ...(m as object), request: undefined })))).not.toContain(answer.token);
  });

  it("a call without a requestId gets one, the same in every message of the call", async () => {
    const { client } = await setup();
    const a = client();
    const events = record();
    acquired(await a.lock([{ descriptor: "doc-2", mode: "shared" }]));
    const [request] = of<ClientLockRequestMessage>(events, "lockRequest");
    const [granted] = of<ClientLockGrantedMessage>(events, "lockGranted");
    expect(request?.requestId).toMatch(/.+/);
    expect(granted?.requestId).toBe(request?.requestId);
  });

  it("lock:timeout with how long the call waited, lock:cancelled on abort, lock:error with the code", async () => {
    const { client } = await setup();
    const holder = client();
    const waiter = client();
    acquired(await holder.lock([{ descriptor: "busy", mode: "exclusive" }]));
    const events = record();

    expect((await waiter.lock([{ descriptor: "busy", mode: "exclusive" }], { acquireTimeoutMs: 100 })).status).toBe("timeout");
    const [timeout] = of<{ waitMs: number; request: ClientLockRequestMessage }>(events, "lockTimeout");
    expect(timeout?.waitMs).toBeGreaterThanOrEqual(90);
    expect(timeout?.request.acquireTimeoutMs).toBe(100);

    const controller = new AbortController();
    const waiting = waiter.lock([{ descriptor: "busy", mode: "exclusive" }], { acquireTimeoutMs: 10_000, signal: controller.signal, requestId: "to-cancel" });
    await until(() => of(events, "lockRequest").length === 2, "the second lock:request");
    controller.abort();
    await expect(waiting).rejects.toMatchObject({ code: "CANCELLED" });
    expect(of<{ requestId: string }>(events, "lockCancelled").map((m) => m.requestId)).toEqual(["to-cancel"]);

    await expect(waiter.lock([{ descriptor: "x", mode: "exclusiv" as "exclusive" }])).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
    const [error] = of<ClientLockErrorMessage>(events, "lockError");
    expect(error?.code).toBe("INVALID_ARGUMENT");
    expect(error?.error).toMatchObject({ code: "INVALID_ARGUMENT" });
    expect(of(events, "lockGranted")).toEqual([]);
  });

  it("bad input to lock reaches subscribers in the declared shapes (a subscriber never trips on it)", async () => {
    const { client } = await setup();
    const a = client();
    const events = record();
    await expect(a.lock(null as unknown as [], { acquireTimeoutMs: "soon" as unknown as number })).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
    const [request] = of<ClientLockRequestMessage>(events, "lockRequest");
    expect(request).toMatchObject({ locks: [], acquireTimeoutMs: 0 });
    expect(of<ClientLockErrorMessage>(events, "lockError")[0]?.code).toBe("INVALID_ARGUMENT");
    a.tryUnlock("not-a-list" as unknown as string[]);
    expect(of<ClientLockReleaseMessage>(events, "lockRelease")).toEqual([{ namespace: "diag", tokenFingerprints: [], via: "tryUnlock" }]);
  });

  it("tryUnlock: lock:release with the fingerprints, then one unlock:flush with the batch size", async () => {
    const { client } = await setup();
    const a = client();
    const tokens = await Promise.all(["t1", "t2", "t3"].map(async (d) => acquired(await a.lock([{ descriptor: d, mode: "exclusive" }])).token));
    const events = record();
    a.tryUnlock(tokens);
    const [release] = of<ClientLockReleaseMessage>(events, "lockRelease");
    expect(release).toEqual({ namespace: "diag", tokenFingerprints: tokens.map(tokenFingerprint), via: "tryUnlock" });
    await until(() => of(events, "unlockFlush").length === 1, "unlock:flush");
    const [flush] = of<ClientUnlockFlushMessage>(events, "unlockFlush");
    expect(flush).toMatchObject({ namespace: "diag", batchSize: 3 });
    expect(flush?.errorCode).toBeUndefined();
    expect(flush?.durationMs).toBeGreaterThan(0);
    acquired(await a.lock([{ descriptor: "t1", mode: "exclusive" }])); // really released

    const token = acquired(await a.lock([{ descriptor: "t4", mode: "exclusive" }])).token;
    await a.unlock([token]);
    expect(of<ClientLockReleaseMessage>(events, "lockRelease").at(-1)).toEqual({ namespace: "diag", tokenFingerprints: [tokenFingerprint(token)], via: "unlock" });
    // An awaited unlock shares the unlocker's single flight (issue 13): it is a flush of its own here.
    const flushes = of<ClientUnlockFlushMessage>(events, "unlockFlush");
    expect(flushes).toHaveLength(2);
    expect(flushes[1]).toMatchObject({ namespace: "diag", batchSize: 1 });
  });

  it("refresh: token and refreshed counts; lock:lost with the reason when the server no longer holds a token", async () => {
    const { client } = await setup();
    const a = client({ refreshIntervalMs: 40, refreshTickMs: 10 });
    const other = client();
    const token = acquired(await a.lock([{ descriptor: "kept", mode: "exclusive" }])).token;
    const events = record();
    await a.refresh([token, "not-a-held-token"]);
    const [refresh] = of<ClientRefreshMessage>(events, "refresh");
    expect(refresh).toMatchObject({ namespace: "diag", tokenCount: 2, refreshedCount: 1 });
    expect(refresh?.errorCode).toBeUndefined();

    await other.unlock([token]); // another client frees it: a's next refresh finds it gone
    await until(() => of(events, "lockLost").length === 1, "lock:lost");
    expect(of<ClientLockLostMessage>(events, "lockLost")).toEqual([{ namespace: "diag", tokenFingerprint: tokenFingerprint(token), reason: "not-refreshed" }]);
    expect(of<ClientRefreshMessage>(events, "refresh").some((m) => m.tokenCount === 1 && m.refreshedCount === 0)).toBe(true);
  });

  it("builds no message at all when nobody subscribes, through every event", async () => {
    const builders = Object.keys(clientMessages) as (keyof typeof clientMessages)[];
    const spies = builders.map((name) => vi.spyOn(clientMessages, name));
    const built = (): number => spies.reduce((sum, spy) => sum + spy.mock.calls.length, 0);
    const { client } = await setup();
    const a = client({ refreshIntervalMs: 40, refreshTickMs: 10 });
    const b = client();

    const flow = async (): Promise<void> => {
      const held = acquired(await a.lock([{ descriptor: "n", mode: "exclusive" }], { acquireTimeoutMs: 1_000 }));
      expect((await b.lock([{ descriptor: "n", mode: "exclusive" }], { acquireTimeoutMs: 20 })).status).toBe("timeout");
      const controller = new AbortController();
      const waiting = b.lock([{ descriptor: "n", mode: "exclusive" }], { acquireTimeoutMs: 5_000, signal: controller.signal });
      setTimeout(() => controller.abort(), 20);
      await expect(waiting).rejects.toMatchObject({ code: "CANCELLED" });
      await expect(b.lock([{ descriptor: "n", mode: "bad" as "shared" }])).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
      await a.refresh([held.token]);
      a.tryUnlock([held.token]);
      const lost = acquired(await a.lock([{ descriptor: "m", mode: "exclusive" }]));
      await b.unlock([lost.token]);
      const gone = new Promise((resolve) => a.lostLocks.subscribe(resolve));
      await gone;
    };

    await flow();
    expect(built()).toBe(0);

    // The same flow with subscribers builds messages: the spies do see the builders.
    const events = record();
    await flow();
    expect(built()).toBeGreaterThan(0);
    const kinds = new Set(events.map(([k]) => k));
    for (const key of Object.keys(CLIENT_CHANNELS)) expect(kinds, key).toContain(key);
  });
});
