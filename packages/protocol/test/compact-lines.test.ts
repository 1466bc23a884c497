import { describe, expect, it } from "vitest";
import { CompactLineReader, CompactLineWriter, LeaseholdError, responseValidators, type LockBatchLine, type LockRequest } from "../src/index.js";

const LEASE = { leaderId: "5f0c2a9e-1d7b-4c1e-9a4f-0b8e3c2d1a00", validForMs: 5_000 };

const requests: LockRequest[] = [
  { requestId: "r0", locks: [{ descriptor: "orders\u0000o-17", mode: "exclusive" }] },
  { locks: [{ descriptor: "doc \"3\"", mode: "shared" }, { descriptor: "pool", mode: "permit", limit: 4 }] },
  { locks: [{ descriptor: "a", mode: "exclusive" }, { descriptor: "b", mode: "exclusive" }], behavior: "as-many-as-possible" },
  { locks: [{ descriptor: "x", mode: "exclusive" }] },
];

const granted = (index: number, token: string, fencing: number[], lease = LEASE): LockBatchLine => ({
  index,
  result: {
    status: "acquired",
    token,
    lease,
    acquired: requests[index]!.locks.map((l, i) => ({ descriptor: l.descriptor, mode: l.mode, fencingToken: fencing[i]! })),
  },
});

/** Split written text into parsed lines, as a client reading the stream would. */
const parsedLines = (text: string): unknown[] => text.split("\n").filter((l) => l !== "").map((l) => JSON.parse(l) as unknown);

function badResponse(fn: () => unknown): LeaseholdError {
  try {
    fn();
  } catch (err) {
    if (err instanceof LeaseholdError && err.code === "BAD_RESPONSE") return err;
    throw err;
  }
  throw new Error("expected BAD_RESPONSE");
}

describe("compact lock-batch lines: the writer", () => {
  it("writes a full grant as a lease line then {index, token, fencingTokens}, and the lease only when it changes", () => {
    const writer = new CompactLineWriter();
    expect(parsedLines(writer.text(granted(1, "tok-1", [7, 8]), requests[1]))).toEqual([
      { lease: LEASE },
      { index: 1, token: "tok-1", fencingTokens: [7, 8] },
    ]);
    expect(parsedLines(writer.text(granted(0, "tok-0", [9]), requests[0]))).toEqual([{ index: 0, token: "tok-0", fencingTokens: [9] }]);
    const restarted = { leaderId: "another-leader", validForMs: 5_000 };
    expect(parsedLines(writer.text(granted(3, "tok-3", [10], restarted), requests[3]))).toEqual([
      { lease: restarted },
      { index: 3, token: "tok-3", fencingTokens: [10] },
    ]);
  });

  it("writes timeouts, errors and partial grants in full, exactly as without compact", () => {
    const writer = new CompactLineWriter();
    const timeout: LockBatchLine = { index: 3, result: { status: "timeout" } };
    const error: LockBatchLine = { index: 0, error: { code: "CANCELLED", message: "cancelled", details: { requestId: "r0" } } };
    const partial: LockBatchLine = {
      index: 2,
      result: { status: "acquired", token: "tok-2", lease: LEASE, acquired: [{ descriptor: "b", mode: "exclusive", fencingToken: 4 }] },
    };
    for (const [line, request] of [[timeout, requests[3]], [error, requests[0]], [partial, requests[2]]] as const) {
      expect(writer.text(line, request)).toBe(`${JSON.stringify(line)}\n`);
    }
    // An entry that is not a well-formed request cannot be completed by a client: written in full.
    expect(writer.text(granted(0, "tok-0", [1]), null)).toBe(`${JSON.stringify(granted(0, "tok-0", [1]))}\n`);
    // Locks answered in another order than asked (never by this server) are written in full too.
    const swapped: LockBatchLine = {
      index: 1,
      result: { status: "acquired", token: "t", lease: LEASE, acquired: [{ descriptor: "pool", mode: "permit", fencingToken: 2 }, { descriptor: "doc \"3\"", mode: "shared", fencingToken: 1 }] },
    };
    expect(writer.text(swapped, requests[1])).toBe(`${JSON.stringify(swapped)}\n`);
  });
});

describe("compact lock-batch lines: the reader", () => {
  it("reads back exactly the full lines that were written, whatever their mix", () => {
    const writer = new CompactLineWriter();
    const lines: LockBatchLine[] = [
      granted(1, "tok-1", [7, 8]),
      { index: 3, result: { status: "timeout" } },
      { index: 2, result: { status: "acquired", token: "tok-2", lease: LEASE, acquired: [{ descriptor: "a", mode: "exclusive", fencingToken: 9 }] } },
      granted(0, "tok-0", [11], { leaderId: "next", validForMs: 3_000 }),
    ];
    const text = lines.map((l) => writer.text(l, requests[l.index])).join("");
    const reader = new CompactLineReader(requests);
    const read = parsedLines(text).map((p) => reader.read(p)).filter((l) => l !== undefined);
    expect(read).toEqual(lines);
    for (const line of read) expect(responseValidators["lock-batch"].check(line)).toBe(true);
  });

  it("reads full lines alone (a server that ignores compact) unchanged", () => {
    const reader = new CompactLineReader(requests);
    const line = granted(0, "tok", [1]);
    expect(reader.read(JSON.parse(JSON.stringify(line)))).toEqual(line);
  });

  it("the lease it hands out is frozen: one caller cannot change another's", () => {
    const reader = new CompactLineReader(requests);
    reader.read({ lease: LEASE });
    const a = reader.read({ index: 0, token: "a", fencingTokens: [1] });
    const b = reader.read({ index: 3, token: "b", fencingTokens: [2] });
    const leaseOf = (l: LockBatchLine | undefined) => (l && "result" in l && l.result.status === "acquired" ? l.result.lease : undefined);
    expect(Object.isFrozen(leaseOf(a))).toBe(true);
    expect(leaseOf(b)).toEqual(LEASE);
  });

  it.each([
    ["a grant line before any lease line", [{ index: 0, token: "t", fencingTokens: [1] }], /before any lease line/],
    ["a grant line for an entry that was not sent", [{ lease: LEASE }, { index: 9, token: "t", fencingTokens: [1] }], /entry 9, which was not sent/],
    ["too few fencing tokens", [{ lease: LEASE }, { index: 1, token: "t", fencingTokens: [1] }], /1 fencing tokens for an entry of 2 locks/],
    ["too many fencing tokens", [{ lease: LEASE }, { index: 0, token: "t", fencingTokens: [1, 2] }], /2 fencing tokens for an entry of 1 locks/],
    ["a grant line with an unknown field", [{ lease: LEASE }, { index: 0, token: "t", fencingTokens: [1], lease: LEASE }], /does not match the protocol/],
    ["a fencing token that is not a positive integer", [{ lease: LEASE }, { index: 0, token: "t", fencingTokens: [0] }], /does not match the protocol/],
    ["a lease line without a leader", [{ lease: { validForMs: 5 } }], /does not match the protocol/],
    ["a line of no known shape", [{ index: 0 }], /does not match the protocol/],
  ])("%s is BAD_RESPONSE", (_what, lines, message) => {
    const reader = new CompactLineReader(requests);
    const err = badResponse(() => {
      for (const line of lines) reader.read(line);
    });
    expect(err.message).toMatch(message);
  });
});
