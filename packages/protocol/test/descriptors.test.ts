import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { cellLock, LeaseholdError, rowLock, utf8ByteLength } from "../src/index.js";

const part = fc.oneof(
  fc.string({ unit: "binary", maxLength: 12 }).filter((s) => utf8ByteLength(s) >= 0),
  fc.string({ unit: fc.constantFrom("\u0000", "\u0001", "\u0002", "a", "b"), maxLength: 6 }),
  fc.uint8Array({ maxLength: 8 }),
);
const table = fc.string({ minLength: 1, maxLength: 6, unit: fc.constantFrom("t", "u", "\u0000", "\u0001") });
const key = (p: string | Uint8Array) => (typeof p === "string" ? `s:${p}` : `b:${Array.from(p).join(",")}`);

describe("descriptor helpers", () => {
  it("match the protocol's example for plain strings", () => {
    expect(rowLock("orders", "o-17")).toBe("orders\u0000o-17");
    expect(cellLock("orders", "o-17", "total")).toBe("orders\u0000o-17\u0000total");
  });

  it("are injective: different inputs never give the same row descriptor", () => {
    fc.assert(
      fc.property(table, part, table, part, (t1, r1, t2, r2) => {
        const same = t1 === t2 && key(r1) === key(r2);
        expect(rowLock(t1, r1) === rowLock(t2, r2)).toBe(same);
      }),
      { numRuns: 2000 },
    );
  });

  it("are injective for cells, and a row lock never equals a cell lock", () => {
    fc.assert(
      fc.property(table, part, part, table, part, part, (t1, r1, c1, t2, r2, c2) => {
        const same = t1 === t2 && key(r1) === key(r2) && key(c1) === key(c2);
        expect(cellLock(t1, r1, c1) === cellLock(t2, r2, c2)).toBe(same);
        expect(rowLock(t1, r1)).not.toBe(cellLock(t2, r2, c2));
      }),
      { numRuns: 2000 },
    );
  });

  it("a string and a byte array never collide", () => {
    expect(rowLock("t", new Uint8Array([0x61]))).not.toBe(rowLock("t", "a"));
    expect(rowLock("t", new Uint8Array([0x61]))).not.toBe(rowLock("t", "\u0001b61"));
  });

  it("refuses descriptors over 1024 bytes with a clear error", () => {
    expect(() => rowLock("t", "x".repeat(1022))).not.toThrow();
    let err: unknown;
    try {
      cellLock("t", "x".repeat(1000), new Uint8Array(20));
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(LeaseholdError);
    expect((err as LeaseholdError).code).toBe("INVALID_ARGUMENT");
    expect((err as LeaseholdError).message).toMatch(/cellLock: the descriptor would be 1045 UTF-8 bytes; the limit is 1024/);
  });

  it("refuses an empty table and lone surrogates", () => {
    expect(() => rowLock("", "r")).toThrow(/table must be a non-empty string/);
    expect(() => rowLock("t", "\udc00")).toThrow(/rowLock: row must be well-formed Unicode/);
  });
});
