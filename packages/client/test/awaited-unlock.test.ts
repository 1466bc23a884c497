import { LeaseholdError, type UnlockRequest, type UnlockResponse } from "@leasehold/protocol";
import { afterEach, describe, expect, it } from "vitest";
import { LockClient } from "../src/index.js";
import { captureLogger } from "./support/capture-logger.js";
import { FakeLockService } from "./support/fake-lock-service.js";

const clients: LockClient[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close();
});

function setup(service: FakeLockService = new FakeLockService()) {
  const log = captureLogger();
  const client = LockClient.embedded(service, { namespace: "ns", logger: log.logger });
  clients.push(client);
  return { service, client, log };
}

async function lockToken(client: LockClient, descriptor: string): Promise<string> {
  const answer = await client.lock([{ descriptor, mode: "exclusive" }]);
  if (answer.status !== "acquired") throw new Error("not acquired");
  return answer.token;
}

/** A fake whose unlock calls fail for the call numbers listed (0 = the first call). */
class FailingCalls extends FakeLockService {
  #calls = 0;
  constructor(private readonly failing: ReadonlySet<number>) {
    super();
  }
  override async unlock(ns: string, request: UnlockRequest): Promise<UnlockResponse> {
    if (this.failing.has(this.#calls++)) {
      this.unlockCalls.push([...request.tokens]);
      throw new LeaseholdError("UNAVAILABLE", "scripted failure of this call");
    }
    return super.unlock(ns, request);
  }
}

describe("awaited unlock coalesces into the unlocker's single flight", () => {
  it("64 concurrent awaited unlocks: each caller gets its own answer, never two calls in flight, far fewer calls", async () => {
    const { service, client } = setup();
    service.unlockDelayMs = 3;
    const tokens = await Promise.all(Array.from({ length: 64 }, (_, i) => lockToken(client, `k${i}`)));
    const answers = await Promise.all(
      tokens.map(async (token, i) => {
        // Every fourth caller also asks for a token that is not held (answered without it).
        const ask = i % 4 === 0 ? [token, `never-${i}`] : [token];
        return client.unlock(ask);
      }),
    );
    answers.forEach((answer, i) => expect(answer).toEqual([tokens[i]]));
    expect(service.maxUnlockInFlight).toBe(1);
    expect(service.unlockCalls.length).toBeLessThan(64);
    expect(service.held.size).toBe(0);
  });

  it("mixed with tryUnlock: still one call in flight, and tryUnlock's tokens are released too", async () => {
    const { service, client } = setup();
    service.unlockDelayMs = 3;
    const tokens = await Promise.all(Array.from({ length: 40 }, (_, i) => lockToken(client, `m${i}`)));
    const awaited = tokens.map((token, i) => {
      if (i % 2 === 0) {
        client.tryUnlock([token]);
        return Promise.resolve([token]);
      }
      return client.unlock([token]);
    });
    expect(await Promise.all(awaited)).toEqual(tokens.map((t) => [t]));
    await client.close();
    expect(service.maxUnlockInFlight).toBe(1);
    expect(service.held.size).toBe(0);
  });

  it("stops refreshing the tokens synchronously, before the call is even sent", async () => {
    const { client } = setup();
    const token = await lockToken(client, "sync");
    const pending = client.unlock([token]);
    expect(client.isHeld(token)).toBe(false);
    expect(await pending).toEqual([token]);
  });

  it("a token in two concurrent calls is answered to the first that asked", async () => {
    const { client } = setup();
    const token = await lockToken(client, "twice");
    const [first, second] = await Promise.all([client.unlock([token]), client.unlock([token])]);
    expect(first).toEqual([token]);
    expect(second).toEqual([]);
  });

  it("a failed call rejects the callers whose tokens it carried; the next call works", async () => {
    const { service, client } = setup(new FailingCalls(new Set([0])));
    const a = await lockToken(client, "a");
    const b = await lockToken(client, "b");
    await expect(client.unlock([a])).rejects.toMatchObject({ code: "UNAVAILABLE" });
    expect(await client.unlock([b])).toEqual([b]);
    expect(service.held.has(a)).toBe(true); // it lapses with its lease, as after any failed unlock
    expect(client.stats().unlockFailures).toBe(1);
  });

  it("rejects bad tokens with INVALID_ARGUMENT before anything is sent or forgotten", async () => {
    const { service, client } = setup();
    const token = await lockToken(client, "bad");
    for (const bad of [[token, 42], [token, ""], "not-an-array", [token, "x".repeat(10_000)]]) {
      await expect(client.unlock(bad as string[])).rejects.toMatchObject({ code: "INVALID_ARGUMENT", details: { path: "tokens" } });
    }
    expect(service.unlockCalls).toEqual([]);
    expect(client.isHeld(token)).toBe(true);
    expect(await client.unlock([])).toEqual([]);
  });

  it("a signal aborted before the call: CANCELLED at once, tokens released, and a failing call is no unhandled rejection", async () => {
    const { service, client } = setup(new FailingCalls(new Set([0])));
    const a = await lockToken(client, "pre-aborted");
    const b = await lockToken(client, "pre-aborted-2");
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown): void => void unhandled.push(reason);
    process.on("unhandledRejection", onUnhandled);
    try {
      await expect(client.unlock([a], { signal: AbortSignal.abort() })).rejects.toMatchObject({ code: "CANCELLED" });
      await client.unlock([b], { signal: AbortSignal.abort() }).catch(() => undefined);
      await new Promise((r) => setTimeout(r, 50));
      expect(service.unlockCalls.flat()).toEqual(expect.arrayContaining([a, b]));
      expect(unhandled).toEqual([]);
    } finally {
      process.off("unhandledRejection", onUnhandled);
    }
  });

  it("an aborted wait rejects CANCELLED, and the tokens are released all the same", async () => {
    const { service, client } = setup();
    service.unlockDelayMs = 20;
    const token = await lockToken(client, "aborted");
    const abort = new AbortController();
    const pending = client.unlock([token], { signal: abort.signal });
    abort.abort();
    await expect(pending).rejects.toMatchObject({ code: "CANCELLED" });
    await client.close();
    expect(service.held.size).toBe(0);
  });
});

describe("a flush of more than 10,000 tokens", () => {
  it("whose first chunk fails still sends the rest, and answers each awaited caller by its own chunk", async () => {
    const service = new FailingCalls(new Set([0]));
    const { client, log } = setup(service);
    // Held tokens for the awaited callers: one will land in the first chunk, one in the last.
    const early = await lockToken(client, "early");
    const late = await lockToken(client, "late");
    const many = Array.from({ length: 25_000 }, (_, i) => `t-${i}`);
    // All queued in the same turn, so one flush takes them together: chunks of 10,000, 10,000, 5,002.
    const first = client.unlock([early]);
    client.tryUnlock(many);
    const last = client.unlock([late]);
    await expect(first).rejects.toMatchObject({ code: "UNAVAILABLE" });
    expect(await last).toEqual([late]);
    await client.close();
    expect(service.unlockCalls.map((c) => c.length)).toEqual([10_000, 10_000, 5_002]);
    // The second and third chunks were sent and released although the first call failed.
    expect(new Set(service.unlockedTokens)).toEqual(new Set([...service.unlockCalls[1]!, ...service.unlockCalls[2]!]));
    expect(service.unlockedTokens).toContain(late);
    expect(log.lines.filter((l) => String(l.msg).includes("unlock call failed"))).toHaveLength(1);
  });
});
