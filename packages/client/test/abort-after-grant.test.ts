import type { CallOptions, LockCancelRequest, LockCancelResponse, LockRequest, LockResponse, LockService } from "@leasehold/protocol";
import { describe, expect, it } from "vitest";
import { acquireLocks } from "../src/acquire-locks.js";
import { LockBatcher } from "../src/lock-batcher.js";
import { FakeLockService } from "./support/fake-lock-service.js";

// A grant that reaches the client after its caller aborted must be given back by the client
// itself: nothing else (no probe, no cancel) is relied on here. The services below ignore the
// signal, as a transport whose answer was already on its way would, and answer a grant later.

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const GRANT: LockResponse = {
  status: "acquired",
  token: "late-token",
  lease: { leaderId: "l", validForMs: 5_000 },
  acquired: [{ descriptor: "x", mode: "exclusive", fencingToken: 3 }],
};

/** A `lock` that answers `GRANT` when the test says so, whatever the signal did meanwhile. */
function lateGrant() {
  let answer: (() => void) | undefined;
  const requests: LockRequest[] = [];
  const lock = (_ns: string, request: LockRequest, _options?: CallOptions): Promise<LockResponse> => {
    requests.push(request);
    return new Promise((resolve) => (answer = () => resolve(GRANT)));
  };
  return { lock, requests, grantNow: () => answer!() };
}

describe("a grant that arrives after the abort is released", () => {
  it("by acquireLocks (a service without cancelLock)", async () => {
    const late = lateGrant();
    const released: string[] = [];
    const abort = new AbortController();
    let n = 0;
    const call = acquireLocks({ lock: late.lock }, "ns", [{ descriptor: "x", mode: "exclusive" }], { acquireTimeoutMs: 5_000, signal: abort.signal }, () => performance.now(), (t) => released.push(...t), () => `r-${n++}`);
    abort.abort();
    late.grantNow();
    await expect(call).rejects.toMatchObject({ code: "CANCELLED" });
    expect(released).toEqual(["late-token"]);
    expect(late.requests).toHaveLength(1); // never re-sent
  });

  it("by acquireLocks, which also cancels by requestId when the service can", async () => {
    const cancels: string[] = [];
    const released: string[] = [];
    const abort = new AbortController();
    const service = {
      lock: (_ns: string, _r: LockRequest, options?: CallOptions) =>
        new Promise<LockResponse>((_, reject) => options?.signal?.addEventListener("abort", () => reject(new Error("aborted")))),
      cancelLock: async (_ns: string, request: LockCancelRequest): Promise<LockCancelResponse> => {
        cancels.push(request.requestId);
        return { cancelled: true };
      },
    };
    const call = acquireLocks(service, "ns", [{ descriptor: "x", mode: "exclusive" }], { acquireTimeoutMs: 5_000, signal: abort.signal, requestId: "mine" }, () => performance.now(), (t) => released.push(...t), () => "unused");
    abort.abort();
    await expect(call).rejects.toMatchObject({ code: "CANCELLED" });
    expect(cancels).toEqual(["mine"]);
  });

  it("by the lock batcher, for a lone request sent as a plain lock", async () => {
    const late = lateGrant();
    const released: string[] = [];
    const cancels: string[] = [];
    const service = Object.assign(new FakeLockService(), {
      lock: late.lock,
      lockBatch: async () => undefined,
      cancelLock: async (_ns: string, request: LockCancelRequest): Promise<LockCancelResponse> => {
        cancels.push(request.requestId);
        return { cancelled: false }; // the cancel lost the race: the grant is on its way
      },
    }) as LockService;
    const batcher = new LockBatcher({ service, namespace: "ns", release: (t) => released.push(...t), now: () => performance.now() });
    const abort = new AbortController();
    const call = batcher.lock("ns", { requestId: "alone-1", locks: [{ descriptor: "x", mode: "exclusive" }], acquireTimeoutMs: 5_000 }, { signal: abort.signal });
    await sleep(5);
    expect(late.requests).toHaveLength(1); // it left alone, as a plain lock
    abort.abort();
    await expect(call).rejects.toMatchObject({ code: "CANCELLED" });
    expect(cancels).toEqual(["alone-1"]);
    late.grantNow();
    await sleep(5);
    expect(released).toEqual(["late-token"]);
  });
});
