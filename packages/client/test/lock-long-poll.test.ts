import type { CallOptions, LockCancelRequest, LockCancelResponse, LockRequest, LockResponse } from "@leasehold/protocol";
import { describe, expect, it } from "vitest";
import { LockClient } from "../src/index.js";
import { captureLogger } from "./support/capture-logger.js";
import { FakeLockService } from "./support/fake-lock-service.js";

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe("lock: long waits and aborts", () => {
  it("splits a long wait into polls of at most 60 s, all with the same requestId, until the deadline", async () => {
    let clock = 0;
    const sent: LockRequest[] = [];
    const service = new (class extends FakeLockService {
      override async lock(_ns: string, request: LockRequest): Promise<LockResponse> {
        sent.push(request);
        clock += request.acquireTimeoutMs ?? 0; // the server waited the whole poll, in vain
        return { status: "timeout" };
      }
    })();
    const client = LockClient.embedded(service, { namespace: "ns", logger: captureLogger().logger, now: () => clock });
    const answer = await client.lock([{ descriptor: "d", mode: "exclusive" }], { acquireTimeoutMs: 150_000 });
    expect(answer).toEqual({ status: "timeout" });
    expect(sent.map((r) => r.acquireTimeoutMs)).toEqual([60_000, 60_000, 30_000]);
    expect(new Set(sent.map((r) => r.requestId)).size).toBe(1);
    expect(sent[0]!.requestId).toMatch(/^[A-Za-z0-9_-]{16}\.[0-9a-z]+$/);
    await client.close();
  });

  it("uses the caller's requestId, and a fresh one per call otherwise", async () => {
    const service = new FakeLockService();
    const seen: (string | undefined)[] = [];
    const spy = new (class extends FakeLockService {
      override lock(ns: string, request: LockRequest, options?: CallOptions): Promise<LockResponse> {
        seen.push(request.requestId);
        return service.lock(ns, request, options);
      }
    })();
    const client = LockClient.embedded(spy, { namespace: "ns", logger: captureLogger().logger });
    await client.lock([{ descriptor: "a", mode: "exclusive" }], { requestId: "mine" });
    await client.lock([{ descriptor: "b", mode: "exclusive" }]);
    await client.lock([{ descriptor: "c", mode: "exclusive" }]);
    expect(seen[0]).toBe("mine");
    expect(seen[1]).not.toBe(seen[2]);
    await client.close();
  });

  it("a grant that races with the abort is released", async () => {
    // The service grants although the caller aborted meanwhile (the answer was already on its way).
    const service = new (class extends FakeLockService {
      override async lock(ns: string, request: LockRequest): Promise<LockResponse> {
        await sleep(20);
        return super.lock(ns, request);
      }
    })();
    const client = LockClient.embedded(service, { namespace: "ns", logger: captureLogger().logger });
    const controller = new AbortController();
    const call = client.lock([{ descriptor: "race", mode: "exclusive" }], { signal: controller.signal });
    setTimeout(() => controller.abort(), 5);
    await expect(call).rejects.toMatchObject({ code: "CANCELLED" });
    await client.close();
    expect(service.held.size).toBe(0);
    expect(service.unlockedTokens).toHaveLength(1);
  });

  it("a grant whose answer the abort cut off is cancelled by requestId and so released", async () => {
    // The service grants, then the abort cuts the answer off (as a closed connection would).
    const service = new (class extends FakeLockService {
      readonly cancels: string[] = [];
      override async lock(ns: string, request: LockRequest, options?: CallOptions): Promise<LockResponse> {
        const answer = await super.lock(ns, request);
        if (options?.signal) {
          await new Promise((_, reject) => options.signal!.addEventListener("abort", () => reject(new Error("aborted"))));
        }
        return answer;
      }
      /** As the server's lock-cancel: a granted request is released as by unlock. */
      async cancelLock(ns: string, request: LockCancelRequest): Promise<LockCancelResponse> {
        this.cancels.push(request.requestId);
        const token = this.byRequestId.get(request.requestId);
        if (token === undefined || !this.held.has(token)) return { cancelled: false };
        await this.unlock(ns, { tokens: [token] });
        return { cancelled: true };
      }
    })();
    const client = LockClient.embedded(service, { namespace: "ns", logger: captureLogger().logger });
    const controller = new AbortController();
    const call = client.lock([{ descriptor: "cut", mode: "exclusive" }], { signal: controller.signal });
    await sleep(10);
    expect(service.held.size).toBe(1);
    controller.abort();
    await expect(call).rejects.toMatchObject({ code: "CANCELLED" });
    await sleep(10);
    await client.close();
    expect(service.held.size).toBe(0);
    expect(service.cancels).toHaveLength(1);
    expect(service.lockCalls).toBe(1); // cancelled, never re-sent
  });
});
