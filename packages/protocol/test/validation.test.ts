import { describe, expect, it } from "vitest";
import { LeaseholdError, requestValidators, validateNamespace } from "../src/index.js";

function errorOf(fn: () => unknown): LeaseholdError {
  try {
    fn();
  } catch (err) {
    if (err instanceof LeaseholdError) return err;
    throw err;
  }
  throw new Error("expected a LeaseholdError");
}

const lock = (body: unknown) => requestValidators.lock.parse(body);

describe("lock request validation", () => {
  it("accepts a minimal request and leaves defaults absent", () => {
    expect(lock({ locks: [{ descriptor: "a", mode: "exclusive" }] })).toEqual({ locks: [{ descriptor: "a", mode: "exclusive" }] });
  });

  it.each([
    [{ locks: [{ descriptor: "a", mode: "exclusiv" }] }, "locks[0].mode", /one of exclusive, shared, permit/],
    [{ locks: [{ descriptor: "a", mode: "exclusive", color: 1 }] }, "locks[0].color", /not a known field/],
    [{ locks: [{ descriptor: "a", mode: "exclusive" }], acquireTimeoutMs: null }, "acquireTimeoutMs", /must not be null/],
    [{ locks: [{ descriptor: "a", mode: "exclusive" }], acquireTimeoutMs: 60_001 }, "acquireTimeoutMs", /between 0 and 60000/],
    [{ locks: [{ descriptor: "a", mode: "exclusive" }], acquireTimeoutMs: 1.5 }, "acquireTimeoutMs", /integer/],
    [{ locks: [{ descriptor: "a", mode: "exclusive" }], acquireTimeoutMs: "5" }, "acquireTimeoutMs", /integer/],
    [{ locks: [] }, "locks", /at least 1/],
    [{}, "locks", /required/],
    [[], "(body)", /JSON object/],
    [{ locks: [{ descriptor: "", mode: "shared" }] }, "locks[0].descriptor", /at least 1/],
    [{ locks: [{ descriptor: "a", mode: "permit" }] }, "locks[0].limit", /required for mode permit/],
    [{ locks: [{ descriptor: "a", mode: "shared", limit: 2 }] }, "locks[0].limit", /only allowed with mode permit/],
    [{ locks: [{ descriptor: "a", mode: "permit", limit: 0 }] }, "locks[0].limit", /between 1 and 1000000/],
    [{ locks: [{ descriptor: "a", mode: "exclusive" }, { descriptor: "a", mode: "shared" }] }, "locks[1].descriptor", /repeats the descriptor of locks\[0\]/],
    [{ locks: [{ descriptor: "a", mode: "exclusive" }], max: 2 }, "max", /only allowed with behavior as-many-as-possible/],
    [{ locks: [{ descriptor: "a", mode: "exclusive" }], behavior: "some" }, "behavior", /one of all-or-none, as-many-as-possible/],
    [{ locks: [{ descriptor: "\ud800x", mode: "exclusive" }] }, "locks[0].descriptor", /lone surrogate/],
    [{ locks: [{ descriptor: "é".repeat(513), mode: "exclusive" }] }, "locks[0].descriptor", /at most 1024 UTF-8 bytes \(got 1026\)/],
    [JSON.parse('{"locks":[{"descriptor":"a","mode":"exclusive"}],"__proto__":{"x":1}}'), "__proto__", /not a known field/],
    [{ locks: [{ descriptor: "a", mode: "exclusive" }], requestId: "r".repeat(129) }, "requestId", /at most 128/],
  ])("refuses %j at %s", (body, path, message) => {
    const err = errorOf(() => lock(body));
    expect(err.code).toBe("INVALID_ARGUMENT");
    expect(err.status).toBe(400);
    expect(err.details.path).toBe(path);
    expect(err.message).toContain(path);
    expect(err.message).toMatch(message);
  });

  it("accepts exactly 1024 UTF-8 bytes and a 4-byte character", () => {
    expect(() => lock({ locks: [{ descriptor: "é".repeat(512), mode: "exclusive" }] })).not.toThrow();
    expect(() => lock({ locks: [{ descriptor: "😀", mode: "exclusive" }] })).not.toThrow();
  });

  it("lists several problems in details and counts them in the message", () => {
    const err = errorOf(() => lock({ locks: [{ descriptor: 1, mode: "x" }], behavior: 3 }));
    expect((err.details.problems as unknown[]).length).toBeGreaterThanOrEqual(3);
    expect(err.message).toMatch(/and \d+ more problems?/);
  });
});

describe("other requests", () => {
  it("count bounds per operation", () => {
    expect(requestValidators.timestamps.parse({ count: 10_000 })).toEqual({ count: 10_000 });
    expect(errorOf(() => requestValidators.timestamps.parse({ count: 10_001 })).details.path).toBe("count");
    expect(errorOf(() => requestValidators["transactions/start"].parse({ count: 1_001 })).details.path).toBe("count");
    expect(errorOf(() => requestValidators.timestamps.parse({})).message).toMatch(/count is required/);
  });

  it("token lists", () => {
    expect(errorOf(() => requestValidators.unlock.parse({ tokens: [] })).details.path).toBe("tokens");
    expect(errorOf(() => requestValidators.refresh.parse({ tokens: ["a", 5] })).details.path).toBe("tokens[1]");
    expect(errorOf(() => requestValidators.unlock.parse({ tokens: Array(10_001).fill("t") })).message).toMatch(/at most 10000/);
  });

  it("immutable-timestamp takes an empty object only", () => {
    expect(requestValidators["immutable-timestamp"].parse({})).toEqual({});
    expect(errorOf(() => requestValidators["immutable-timestamp"].parse({ x: 1 })).details.path).toBe("x");
  });
});

describe("namespace", () => {
  it.each(["a", "A0", "orders.eu-1_x", "z".repeat(64)])("accepts %s", (ns) => {
    expect(validateNamespace(ns)).toBe(ns);
  });
  it.each(["", "-a", ".a", "a/b", "a b", "z".repeat(65), "ü"])("refuses %j", (ns) => {
    const err = errorOf(() => validateNamespace(ns));
    expect(err.code).toBe("INVALID_ARGUMENT");
    expect(err.details.path).toBe("namespace");
  });
});

describe("messages about hostile values", () => {
  it("a deeply nested value is reported, not a stack overflow", () => {
    let deep: unknown = "x";
    for (let i = 0; i < 500_000; i++) deep = [deep];
    const err = errorOf(() => lock({ locks: [{ descriptor: "a", mode: deep }] }));
    expect(err.code).toBe("INVALID_ARGUMENT");
    expect(err.details.path).toBe("locks[0].mode");
    expect(err.message).toContain("an array of 1");
  });

  it("a number JSON turned into Infinity is named as too large, not null", () => {
    const err = errorOf(() => requestValidators.timestamps.parse(JSON.parse('{"count":1e400}')));
    expect(err.details.path).toBe("count");
    expect(err.message).toMatch(/too large to represent/);
  });

  it("long strings are cut in messages", () => {
    const err = errorOf(() => lock({ locks: [{ descriptor: "a", mode: "m".repeat(10_000) }] }));
    expect(err.message.length).toBeLessThan(300);
  });
});

describe("wait-for-locks and timestamp-leases validation", () => {
  const wait = (body: unknown) => requestValidators["wait-for-locks"].parse(body);

  it("accepts a wait in exclusive and shared modes, leaving defaults absent", () => {
    const body = { locks: [{ descriptor: "a", mode: "exclusive" }, { descriptor: "b", mode: "shared" }] };
    expect(wait(body)).toEqual(body);
  });

  it.each([
    [{ locks: [{ descriptor: "a", mode: "permit" }] }, "locks[0].mode", /one of exclusive, shared \(got "permit"\)/],
    [{ locks: [{ descriptor: "a", mode: "exclusive", limit: 2 }] }, "locks[0].limit", /not a known field/],
    [{ locks: [] }, "locks", /at least 1/],
    [{ locks: [{ descriptor: "a", mode: "shared" }, { descriptor: "a", mode: "shared" }] }, "locks[1].descriptor", /repeats the descriptor of locks\[0\]/],
    [{ locks: [{ descriptor: "\ud800", mode: "shared" }] }, "locks[0].descriptor", /lone surrogate/],
    [{ locks: [{ descriptor: "a", mode: "shared" }], acquireTimeoutMs: 60_001 }, "acquireTimeoutMs", /between 0 and 60000/],
    [{ locks: [{ descriptor: "a", mode: "shared" }], acquireTimeoutMs: null }, "acquireTimeoutMs", /must not be null/],
    [{ locks: [{ descriptor: "a", mode: "shared" }], behavior: "all-or-none" }, "behavior", /not a known field/],
    [{ locks: [{ descriptor: "a", mode: "shared" }], requestId: "" }, "requestId", /at least 1/],
  ])("wait-for-locks refuses %j at %s", (body, path, message) => {
    const err = errorOf(() => wait(body));
    expect(err.code).toBe("INVALID_ARGUMENT");
    expect(err.details.path).toBe(path);
    expect(err.message).toContain(path);
    expect(err.message).toMatch(message);
  });

  it.each([
    [{ name: "n", count: 10_001 }, "count", /between 0 and 10000/],
    [{ name: "n", count: -1 }, "count", /between 0 and 10000/],
    [{ name: "n" }, "count", /required/],
    [{ count: 1 }, "name", /required/],
    [{ name: "", count: 1 }, "name", /at least 1/],
    [{ name: "x".repeat(129), count: 1 }, "name", /at most 128/],
    [{ name: "n", count: 1, ttl: 5 }, "ttl", /not a known field/],
    [{ name: null, count: 1 }, "name", /must not be null/],
  ])("timestamp-leases refuses %j at %s", (body, path, message) => {
    const err = errorOf(() => requestValidators["timestamp-leases"].parse(body));
    expect(err.details.path).toBe(path);
    expect(err.message).toMatch(message);
  });

  it("timestamp-leases/min needs a name and nothing else", () => {
    expect(requestValidators["timestamp-leases/min"].parse({ name: "n" })).toEqual({ name: "n" });
    expect(errorOf(() => requestValidators["timestamp-leases/min"].parse({})).details.path).toBe("name");
    expect(errorOf(() => requestValidators["timestamp-leases/min"].parse({ name: "n", count: 1 })).details.path).toBe("count");
  });
});
