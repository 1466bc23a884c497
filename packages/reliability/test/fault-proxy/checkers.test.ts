import type { AcquiredLock, LockMode } from "@leasehold/protocol";
import type { EmbeddedLockService, LockTableSnapshot } from "@leasehold/server";
import { describe, expect, it } from "vitest";
import { checkGrants } from "../../src/fault-proxy/check-grants.js";
import type { LockCallRecord, ServerTap, TokenRecord } from "../../src/fault-proxy/server-tap.js";
import { startTableSampler } from "../../src/fault-proxy/table-sampler.js";
import { Violations } from "../../src/violations.js";

const LEASE = 1_000;
const NS = "ns";

/** A token record as the tap would make it: granted by `grantedBy`, last renewal began at `renewedFrom`. */
function token(
  name: string,
  fencing: number,
  mode: LockMode,
  times: { grantedBy: number; renewedFrom?: number; unlockBefore?: number },
  extra: Partial<TokenRecord> = {},
): TokenRecord {
  const acquired: AcquiredLock[] = [{ descriptor: "d", mode, fencingToken: fencing }];
  return {
    namespace: NS,
    token: name,
    requestId: `req-${name}`,
    acquired,
    grantedBy: times.grantedBy,
    maxRenewBefore: times.renewedFrom ?? times.grantedBy - 1,
    maxRenewAfter: times.grantedBy,
    answers: 1,
    refreshes: 0,
    unlockBefore: times.unlockBefore,
    unlockAfter: times.unlockBefore === undefined ? undefined : times.unlockBefore + 1,
    inconsistencies: [],
    ...extra,
  };
}

function fakeTap(records: TokenRecord[], calls: LockCallRecord[] = []): ServerTap {
  const tokens = new Map(records.map((r) => [r.token, r]));
  return {
    tokens,
    calls,
    byFence: (ns, f) => records.find((r) => r.namespace === ns && r.acquired.some((a) => a.fencingToken === f)),
    byRequestId: (ns, id) => records.filter((r) => r.namespace === ns && r.requestId === id),
    counts: { refreshCalls: 0, unlockCalls: 0, cancelCalls: 0 },
    originalRefresh: async () => ({ refreshed: [], lease: { leaderId: "x", validForMs: LEASE / 2 } }),
  };
}

function check(records: TokenRecord[], calls: LockCallRecord[] = [], issued?: { first: number; next: number }): Violations {
  const violations = new Violations();
  checkGrants({
    tap: fakeTap(records, calls),
    leaseMs: LEASE,
    received: new Set(records.map((r) => r.token)),
    issued: new Map(issued === undefined ? [] : [[NS, issued]]),
    violations,
  });
  return violations;
}

describe("checkGrants (the history checker of section 2b)", () => {
  it("accepts grants that follow each other's unlock or lapse, and shared holders together", () => {
    expect(check([token("a", 1, "exclusive", { grantedBy: 10, unlockBefore: 100 }), token("b", 2, "exclusive", { grantedBy: 150 })]).total).toBe(0);
    expect(check([token("a", 1, "exclusive", { grantedBy: 10 }), token("b", 2, "exclusive", { grantedBy: 1_010 })]).total).toBe(0);
    expect(check([token("a", 1, "shared", { grantedBy: 10 }), token("b", 2, "shared", { grantedBy: 20 })]).total).toBe(0);
  });

  it("finds an exclusive grant made before an earlier conflicting one ended (by unlock or by lease)", () => {
    expect(check([token("a", 1, "exclusive", { grantedBy: 10, unlockBefore: 100 }), token("b", 2, "exclusive", { grantedBy: 50 })]).count("exclusive-overlap")).toBe(1);
    expect(check([token("a", 1, "exclusive", { grantedBy: 10 }), token("b", 2, "shared", { grantedBy: 900 })]).count("exclusive-overlap")).toBe(1);
    expect(check([token("a", 1, "shared", { grantedBy: 10 }), token("b", 2, "exclusive", { grantedBy: 900 })]).count("exclusive-overlap")).toBe(1);
  });

  it("finds a requestId granted a second token while its first was held", () => {
    const first = token("a", 1, "shared", { grantedBy: 10, unlockBefore: 100 }, { requestId: "r" });
    const second = token("b", 2, "shared", { grantedBy: 50 }, { requestId: "r" });
    expect(check([first, second]).count("double-grant")).toBe(1);
    expect(check([first, { ...second, grantedBy: 120 }]).count("double-grant")).toBe(0);
  });

  it("finds a retry answered otherwise than with the token its requestId certainly held", () => {
    const held = token("a", 1, "exclusive", { grantedBy: 10, unlockBefore: 500 }, { requestId: "r" });
    const call = (outcome: LockCallRecord["outcome"], t: string | undefined): LockCallRecord => ({
      namespace: NS,
      requestId: "r",
      begin: 20,
      end: 25,
      waited: false,
      outcome,
      token: t,
      errorCode: undefined,
    });
    expect(check([held], [call("timeout", undefined)]).count("retry-answer")).toBe(1);
    expect(check([held], [call("acquired", "other")]).count("retry-answer")).toBe(1);
    expect(check([held], [call("acquired", "a")]).total).toBe(0);
    // Not certainly held any more by the time it was answered: no claim.
    expect(check([{ ...held, unlockBefore: 22 }], [call("timeout", undefined)]).total).toBe(0);
  });

  it("finds a token nobody received that was refreshed, and inconsistent answers", () => {
    const violations = new Violations();
    checkGrants({
      tap: fakeTap([token("a", 1, "exclusive", { grantedBy: 10 }, { refreshes: 1, inconsistencies: ["other fencing"] })]),
      leaseMs: LEASE,
      received: new Set(),
      issued: new Map(),
      violations,
    });
    expect(violations.count("unreceived-refreshed")).toBe(1);
    expect(violations.count("answer-consistency")).toBe(1);
  });

  it("finds a fencing number handed out with no grant answered for it", () => {
    const records = [token("a", 1, "exclusive", { grantedBy: 10, unlockBefore: 20 }), token("b", 2, "exclusive", { grantedBy: 30 })];
    expect(check(records, [], { first: 1, next: 3 }).total).toBe(0);
    expect(check(records, [], { first: 1, next: 4 }).count("grant-to-nobody")).toBe(1);
  });
});

describe("startTableSampler", () => {
  function sampleOnce(snapshot: LockTableSnapshot, records: TokenRecord[]): Violations {
    const violations = new Violations();
    const service = { snapshot: () => snapshot } as unknown as EmbeddedLockService;
    const sampler = startTableSampler({ service, tap: fakeTap(records), namespaces: [NS], leaseMs: LEASE, intervalMs: 60_000, violations });
    sampler.stop();
    return violations;
  }
  const table = (holders: { mode: LockMode; fencingToken: number }[]): LockTableSnapshot => ({
    descriptors: [{ descriptor: "d", holders, queue: [] }],
    heldTokens: holders.length,
    waitingRequests: 0,
    immutableLocks: [],
    nextTimestamp: 10,
  });

  it("finds two exclusive holders, a holder past its lease and one still there after its unlock", () => {
    const now = performance.now();
    const fresh = token("a", 1, "exclusive", { grantedBy: now });
    expect(sampleOnce(table([{ mode: "exclusive", fencingToken: 1 }]), [fresh]).total).toBe(0);
    expect(sampleOnce(table([{ mode: "exclusive", fencingToken: 1 }, { mode: "exclusive", fencingToken: 2 }]), [fresh]).count("exclusive-snapshot")).toBe(1);
    const stale = token("a", 1, "exclusive", { grantedBy: now - 2 * LEASE });
    expect(sampleOnce(table([{ mode: "exclusive", fencingToken: 1 }]), [stale]).count("holder-past-lease")).toBe(1);
    const unlocked = token("a", 1, "exclusive", { grantedBy: now - 10, unlockBefore: now - 5 });
    expect(sampleOnce(table([{ mode: "exclusive", fencingToken: 1 }]), [unlocked]).count("holder-after-unlock")).toBe(1);
  });
});
