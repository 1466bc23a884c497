import { isLeaseholdError, type LockBatchLine, type LockResponse } from "@leasehold/protocol";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createLockService } from "../../src/service/create-lock-service.js";
import type { EmbeddedLockService } from "../../src/service/embedded-lock-service.js";
import { waitFor } from "../support/wait-for.js";

const exclusive = (descriptor: string, extra: Record<string, unknown> = {}) => ({ locks: [{ descriptor, mode: "exclusive" as const }], ...extra });
const tokenOf = (line: LockBatchLine | undefined): string => {
  const result = line !== undefined && "result" in line ? line.result : undefined;
  if (result?.status !== "acquired") throw new Error(`not a grant: ${JSON.stringify(line)}`);
  return result.token;
};

describe("embedded service: lockBatch, beginLockBatch and cancelLock", () => {
  let service: EmbeddedLockService;
  beforeEach(() => {
    service = createLockService();
  });
  afterEach(async () => {
    await service.close();
  });

  async function hold(ns: string, descriptor: string): Promise<string> {
    const answer: LockResponse = await service.lock(ns, exclusive(descriptor));
    if (answer.status !== "acquired") throw new Error("expected a grant");
    return answer.token;
  }

  it("reports immediate answers synchronously, in array order, and a waiting entry later", async () => {
    const blocker = await hold("ns", "busy");
    const lines: LockBatchLine[] = [];
    const done = service.lockBatch("ns", { requests: [exclusive("busy", { acquireTimeoutMs: 30_000 }), exclusive("a"), { locks: [] }] }, (l) => lines.push(l));
    // Entries answered at once are reported before lockBatch returns: no entry waits for another.
    expect(lines.map((l) => l.index)).toEqual([1, 2]);
    expect("error" in lines[1]! && lines[1].error.code).toBe("INVALID_ARGUMENT");
    await service.unlock("ns", { tokens: [blocker] });
    await done;
    expect(lines.map((l) => l.index)).toEqual([1, 2, 0]);
    expect(tokenOf(lines[2])).toEqual(expect.any(String));
  });

  it("queues entries in array order on each descriptor", async () => {
    let holder = await hold("ns", "q");
    const lines: LockBatchLine[] = [];
    const done = service.lockBatch("ns", { requests: [0, 1, 2].map(() => exclusive("q", { acquireTimeoutMs: 30_000 })) }, (l) => lines.push(l));
    for (let i = 0; i < 3; i++) {
      await service.unlock("ns", { tokens: [holder] });
      await waitFor(() => lines.length === i + 1, `line ${i}`);
      expect(lines[i]!.index).toBe(i);
      holder = tokenOf(lines[i]);
    }
    await done;
  });

  it("rejects a malformed batch before any entry runs, and beginLockBatch throws it synchronously", async () => {
    const lines: LockBatchLine[] = [];
    for (const bad of [null, {}, { requests: [] }, { requests: "x" }, { requests: [exclusive("a")], x: 1 }]) {
      await expect(service.lockBatch("ns", bad, (l) => lines.push(l))).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
      expect(() => service.beginLockBatch("ns", bad, (l) => lines.push(l))).toThrow(/lock-batch request/);
    }
    await expect(service.lockBatch("-bad", { requests: [exclusive("a")] }, (l) => lines.push(l))).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
    expect(lines).toEqual([]);
    expect(service.snapshot("ns").descriptors).toEqual([]);
  });

  it("aborting the signal abandons every unresolved entry (each reports CANCELLED) and releases what they held", async () => {
    const blocker = await hold("ns", "z");
    const controller = new AbortController();
    const lines: LockBatchLine[] = [];
    const done = service.lockBatch(
      "ns",
      {
        requests: [
          { locks: [{ descriptor: "a", mode: "exclusive" }, { descriptor: "z", mode: "exclusive" }], acquireTimeoutMs: 30_000 },
          exclusive("z", { acquireTimeoutMs: 30_000 }),
          exclusive("free"),
        ],
      },
      (l) => lines.push(l),
      { signal: controller.signal },
    );
    expect(service.snapshot("ns").waitingRequests).toBe(2);
    controller.abort();
    await done;
    expect(lines.filter((l) => "error" in l && l.error.code === "CANCELLED").map((l) => l.index).sort()).toEqual([0, 1]);
    expect(service.snapshot("ns").waitingRequests).toBe(0);
    expect(service.snapshot("ns").descriptors.map((d) => d.descriptor)).toEqual(["free", "z"]);
    expect(service.metrics().abandonedTotal).toBe(2);
    await service.unlock("ns", { tokens: [blocker] });
  });

  it("an already aborted signal rejects CANCELLED without running any entry", async () => {
    const lines: LockBatchLine[] = [];
    const error: unknown = await service.lockBatch("ns", { requests: [exclusive("a")] }, (l) => lines.push(l), { signal: AbortSignal.abort() }).catch((e: unknown) => e);
    expect(isLeaseholdError(error, "CANCELLED")).toBe(true);
    expect(lines).toEqual([]);
    expect(service.snapshot("ns").heldTokens).toBe(0);
  });

  it("cancelLock abandons one waiting entry, leaves the others, releases a granted one, and answers false otherwise", async () => {
    const blocker = await hold("ns", "q");
    const lines: LockBatchLine[] = [];
    const done = service.lockBatch(
      "ns",
      { requests: ["r0", "r1", "r2"].map((requestId) => exclusive("q", { requestId, acquireTimeoutMs: 30_000 })) },
      (l) => lines.push(l),
    );
    expect(await service.cancelLock("ns", { requestId: "r1" })).toEqual({ cancelled: true });
    await waitFor(() => lines.length === 1, "the cancelled line");
    expect(lines[0]).toMatchObject({ index: 1, error: { code: "CANCELLED", details: { requestId: "r1" } } });
    expect(service.snapshot("ns").waitingRequests).toBe(2);
    expect(await service.cancelLock("ns", { requestId: "r1" })).toEqual({ cancelled: false });

    await service.unlock("ns", { tokens: [blocker] });
    await waitFor(() => lines.length === 2, "entry 0 granted");
    expect(lines[1]!.index).toBe(0);
    // r0 is granted: cancelling it releases it, and r2 is granted next.
    expect(await service.cancelLock("ns", { requestId: "r0" })).toEqual({ cancelled: true });
    await done;
    expect(lines[2]!.index).toBe(2);
    expect(service.snapshot("ns").heldTokens).toBe(1);
    await expect(service.cancelLock("ns", { requestId: "" })).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
  });

  it("a cancel reaches every caller sharing the requestId, and a later abort of one of them is harmless", async () => {
    await hold("ns", "q");
    const controller = new AbortController();
    const single = service.lock("ns", exclusive("q", { requestId: "shared", acquireTimeoutMs: 30_000 }), { signal: controller.signal });
    const lines: LockBatchLine[] = [];
    const done = service.lockBatch("ns", { requests: [exclusive("q", { requestId: "shared", acquireTimeoutMs: 30_000 })] }, (l) => lines.push(l));
    expect(service.snapshot("ns").waitingRequests).toBe(1);
    await service.cancelLock("ns", { requestId: "shared" });
    await expect(single).rejects.toMatchObject({ code: "CANCELLED" });
    await done;
    expect(lines[0]).toMatchObject({ index: 0, error: { code: "CANCELLED" } });
    controller.abort();
    expect(service.metrics().abandonedTotal).toBe(1);
  });

  it("close answers waiting entries UNAVAILABLE on their lines; a closed service refuses the whole batch", async () => {
    await hold("ns", "q");
    const lines: LockBatchLine[] = [];
    const done = service.lockBatch("ns", { requests: [exclusive("q", { acquireTimeoutMs: 30_000 })] }, (l) => lines.push(l));
    await service.close();
    await done;
    expect(lines[0]).toMatchObject({ index: 0, error: { code: "UNAVAILABLE" } });
    await expect(service.lockBatch("ns", { requests: [exclusive("a")] }, () => undefined)).rejects.toMatchObject({ code: "UNAVAILABLE" });
    await expect(service.cancelLock("ns", { requestId: "x" })).rejects.toMatchObject({ code: "UNAVAILABLE" });
  });
});
