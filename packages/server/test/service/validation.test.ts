import { LeaseholdError } from "@leasehold/protocol";
import { afterEach, describe, expect, it } from "vitest";
import { createLockService } from "../../src/service/create-lock-service.js";
import type { EmbeddedLockService } from "../../src/service/embedded-lock-service.js";

let service: EmbeddedLockService;
afterEach(async () => {
  await service.close();
});

async function refusal(call: Promise<unknown>): Promise<LeaseholdError> {
  try {
    await call;
  } catch (err) {
    expect(err).toBeInstanceOf(LeaseholdError);
    return err as LeaseholdError;
  }
  throw new Error("expected a refusal");
}

describe("validation in the service", () => {
  it("names the field path and changes nothing", async () => {
    service = createLockService();
    const held = await service.lock("ns", { locks: [{ descriptor: "a", mode: "exclusive" }], requestId: "r" });
    expect(held.status).toBe("acquired");
    const before = service.snapshot("ns");
    const metricsBefore = service.metrics();
    const cases: [() => Promise<unknown>, string][] = [
      [() => service.lock("ns", { locks: [{ descriptor: "b", mode: "exclusive", limit: 2 }] } as never), "locks[0].limit"],
      [() => service.lock("ns", { locks: [{ descriptor: "b", mode: "permit" }] } as never), "locks[0].limit"],
      [() => service.lock("ns", { locks: [{ descriptor: "b", mode: "bogus" }] } as never), "locks[0].mode"],
      [() => service.lock("ns", { locks: [{ descriptor: "b", mode: "shared" }, { descriptor: "b", mode: "shared" }] }), "locks[1].descriptor"],
      [() => service.lock("ns", { locks: [{ descriptor: "\ud800", mode: "shared" }] }), "locks[0].descriptor"],
      [() => service.lock("ns", { locks: [{ descriptor: "b", mode: "shared" }], max: 1 }), "max"],
      [() => service.lock("ns", { locks: [{ descriptor: "b", mode: "shared" }], acquireTimeoutMs: null } as never), "acquireTimeoutMs"],
      [() => service.lock("ns", { locks: [{ descriptor: "b", mode: "shared" }], acquireTimeoutMs: 60_001 }), "acquireTimeoutMs"],
      [() => service.lock("ns", { locks: [], requestId: "r" }), "locks"],
      [() => service.lock("ns", { locks: [{ descriptor: "a", mode: "exclusive" }], extra: 1 } as never), "extra"],
      [() => service.lock("bad namespace!", { locks: [{ descriptor: "b", mode: "shared" }] }), "namespace"],
      [() => service.unlock("ns", { tokens: [] }), "tokens"],
      [() => service.refresh("ns", { tokens: [1] } as never), "tokens[0]"],
      [() => service.timestamps("ns", { count: 0 }), "count"],
      [() => service.timestamps("ns", { count: 10_001 }), "count"],
      [() => service.startTransactions("ns", { count: 1_001 }), "count"],
      [() => service.immutableTimestamp("ns", { x: 1 } as never), "x"],
    ];
    for (const [call, path] of cases) {
      const err = await refusal(call());
      expect(err.code).toBe("INVALID_ARGUMENT");
      expect(err.details.path).toBe(path);
      expect(err.message).toContain(path);
    }
    expect(service.snapshot("ns")).toEqual(before);
    expect(service.metrics()).toEqual(metricsBefore);
  });

  it("answers REQUEST_ID_CONFLICT for a different body under a live requestId", async () => {
    service = createLockService();
    await service.lock("ns", { locks: [{ descriptor: "a", mode: "exclusive" }], requestId: "r" });
    const err = await refusal(service.lock("ns", { locks: [{ descriptor: "a", mode: "shared" }], requestId: "r" }));
    expect(err.code).toBe("REQUEST_ID_CONFLICT");
  });

  it("health answers ok with the leader id; every call after close is UNAVAILABLE", async () => {
    service = createLockService({ leaderId: "L1", version: "9.9.9" });
    // A single server is one term of one leader: its serverId defaults to its leader id.
    expect(await service.health()).toEqual({ status: "ok", leaderId: "L1", version: "9.9.9", serverId: "L1" });
    await service.close();
    await service.close();
    for (const call of [
      () => service.health(),
      () => service.lock("ns", { locks: [{ descriptor: "a", mode: "exclusive" }] }),
      () => service.unlock("ns", { tokens: ["t"] }),
      () => service.timestamps("ns", { count: 1 }),
    ]) {
      expect((await refusal(call())).code).toBe("UNAVAILABLE");
    }
  });

  it("refuses options that cannot give a correct service", () => {
    expect(() => createLockService({ leaseMs: 100, validForMs: 100 })).toThrow(RangeError);
    expect(() => createLockService({ leaseMs: 0 })).toThrow(RangeError);
    service = createLockService();
  });
});

describe("snapshots", () => {
  it("hold no tokens, and an unused namespace gives an empty picture without creating it", async () => {
    service = createLockService();
    const held = await service.lock("ns", { locks: [{ descriptor: "a", mode: "permit", limit: 2 }] });
    const txn = await service.startTransactions("ns", { count: 1 });
    const text = JSON.stringify(service.snapshot("ns"));
    if (held.status === "acquired") expect(text).not.toContain(held.token);
    expect(text).not.toContain(txn.transactions[0]!.token);
    expect(service.snapshot("ns").descriptors).toEqual([{ descriptor: "a", limit: 2, holders: [{ mode: "permit", fencingToken: 1 }], queue: [] }]);
    expect(service.snapshot("unused")).toEqual({ descriptors: [], heldTokens: 0, waitingRequests: 0, immutableLocks: [], nextTimestamp: 1 });
    expect(service.metrics().namespaces).toBe(1);
    expect(() => service.snapshot("bad/ns")).toThrow(LeaseholdError);
  });
});
