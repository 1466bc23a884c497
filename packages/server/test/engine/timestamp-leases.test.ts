import { describe, expect, it } from "vitest";
import { makeEngine } from "./engine-fixture.js";

describe("timestamp leases (PROTOCOL.md timestamp-leases)", () => {
  it("holds fresh timestamps per name in order; min is the smallest held, or a fresh timestamp", () => {
    const t = makeEngine();
    const start = t.engine.timestamps("ns", { count: 1 }).start;
    const a = t.engine.acquireTimestampLease("ns", { name: "n", count: 3 });
    expect(a.leased).toBe(start + 1);
    expect(a.timestamps).toEqual({ start: a.leased + 1, count: 3 });
    expect(a.minLeased).toBe(a.leased);
    const b = t.engine.acquireTimestampLease("ns", { name: "n", count: 0 });
    expect(b.leased).toBe(a.leased + 4);
    expect(b.timestamps).toEqual({ start: b.leased + 1, count: 0 });
    expect(b.minLeased).toBe(a.leased);
    const other = t.engine.acquireTimestampLease("ns", { name: "other", count: 0 });
    expect(other.minLeased).toBe(other.leased);
    expect(t.engine.minLeasedTimestamp("ns", "n")).toEqual({ minLeased: a.leased });
    expect(t.engine.leaseFloor("ns")).toBe(a.leased);
    t.engine.unlock("ns", { tokens: [a.token] });
    expect(t.engine.minLeasedTimestamp("ns", "n")).toEqual({ minLeased: b.leased });
    t.engine.unlock("ns", { tokens: [b.token, other.token] });
    expect(t.engine.leaseFloor("ns")).toBeUndefined();
    // None held: a fresh timestamp, above everything handed out.
    const fresh = t.engine.minLeasedTimestamp("ns", "n").minLeased;
    expect(fresh).toBeGreaterThan(other.leased);
    expect(t.engine.timestamps("ns", { count: 1 }).start).toBe(fresh + 1);
  });

  it("a lease is held by a token that refreshes, and lapses like a lock when nothing refreshes it", () => {
    const t = makeEngine();
    const a = t.engine.acquireTimestampLease("ns", { name: "n", count: 0 });
    const b = t.engine.acquireTimestampLease("ns", { name: "n", count: 0 });
    t.tick(600);
    expect(t.engine.refresh("ns", { tokens: [b.token] }).refreshed).toEqual([b.token]);
    t.tick(600);
    expect(t.lapses).toEqual([{ namespace: "ns", descriptors: 0 }]);
    expect(t.engine.minLeasedTimestamp("ns", "n").minLeased).toBe(b.leased);
    expect(t.engine.refresh("ns", { tokens: [a.token] }).refreshed).toEqual([]);
    t.tick(1_000);
    expect(t.engine.minLeasedTimestamp("ns", "n").minLeased).toBeGreaterThan(b.leased);
  });

  it("a retry with the same requestId answers the same lease, renewed; another request with the id is a conflict", () => {
    const t = makeEngine();
    const first = t.engine.acquireTimestampLease("ns", { name: "n", count: 2, requestId: "r" });
    t.tick(600);
    const again = t.engine.acquireTimestampLease("ns", { name: "n", count: 2, requestId: "r" });
    expect(again).toEqual(first);
    t.tick(600);
    // Renewed by the retry: still held a lease after the first grant.
    expect(t.engine.minLeasedTimestamp("ns", "n").minLeased).toBe(first.leased);
    expect(() => t.engine.acquireTimestampLease("ns", { name: "n", count: 3, requestId: "r" })).toThrow(expect.objectContaining({ code: "REQUEST_ID_CONFLICT" }));
    expect(() => t.engine.lock("ns", { locks: [{ descriptor: "d", mode: "exclusive" }], requestId: "r" })).toThrow(expect.objectContaining({ code: "REQUEST_ID_CONFLICT" }));
    t.engine.unlock("ns", { tokens: [first.token] });
    expect(t.engine.acquireTimestampLease("ns", { name: "n", count: 2, requestId: "r" }).token).not.toBe(first.token);
  });
});
