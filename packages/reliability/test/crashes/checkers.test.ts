/**
 * The crash scenarios' checkers, fed hand-made histories: each must find what it is meant to find
 * (and nothing in a correct history), or the scenarios' "0 violations" would mean nothing.
 */
import { describe, expect, it } from "vitest";
import { checkValueOrder, type IssuedValue } from "../../src/crashes/value-order-checker.js";
import { Violations } from "../../src/violations.js";
import { checkFifo } from "../../src/crashes/waiter-flood-scenario.js";
import type { WaiterOutcome } from "../../src/crashes/waiter-flood-protocol.js";

const ts = (value: number, sentAt: number, receivedAt: number): IssuedValue => ({ kind: "timestamp", value, sentAt, receivedAt });
const fence = (value: number, descriptor: string, leaderId: string, sentAt: number, receivedAt: number): IssuedValue => ({
  kind: "fencing",
  value,
  descriptor,
  leaderId,
  sentAt,
  receivedAt,
});

function checks(values: IssuedValue[], leaders = ["a", "b"], restartedAt: number[] = []): string[] {
  const v = new Violations();
  checkValueOrder(values, leaders, restartedAt, v);
  return v.list().map((x) => x.check);
}

describe("checkValueOrder", () => {
  it("accepts a correct history, including overlapping calls answered out of order", () => {
    const history = [ts(10, 0, 5), ts(12, 1, 3), fence(11, "d", "a", 2, 4), fence(20, "d", "b", 6, 7), ts(21, 8, 9)];
    expect(checks(history)).toEqual([]);
  });

  it("finds a timestamp not above a value received before it was asked for", () => {
    expect(checks([ts(10, 0, 1), ts(10, 2, 3)])).toEqual(["timestamp-order"]);
    expect(checks([fence(30, "d", "a", 0, 1), ts(29, 2, 3)])).toEqual(["timestamp-order"]);
  });

  it("finds a fencing token not above an earlier one of its descriptor, but not across descriptors", () => {
    expect(checks([fence(5, "d", "a", 0, 1), fence(5, "d", "a", 2, 3)])).toEqual(["fencing-order"]);
    expect(checks([fence(5, "d", "a", 0, 1), fence(4, "e", "a", 2, 3)])).toEqual([]);
  });

  it("finds a later server process's token not above an earlier process's, even when the answers overlapped", () => {
    // Overlapping in real time, so only the leader order can tell.
    expect(checks([fence(9, "d", "a", 0, 10), fence(3, "d", "b", 1, 2)])).toEqual(["fencing-across-restarts"]);
    expect(checks([fence(9, "d", "x", 0, 1)])).toEqual(["fencing-across-restarts"]);
  });

  it("counts the values sent after the first restart", () => {
    const v = new Violations();
    const summary = checkValueOrder([ts(1, 0, 1), ts(2, 5, 6), ts(3, 7, 8)], ["a"], [4], v);
    expect(summary).toEqual({ checked: 3, afterRestart: 2 });
  });
});

describe("checkFifo", () => {
  const granted = (i: number, fencingToken: number, arrival: number): WaiterOutcome => ({ i, fencingToken, arrival });

  it("accepts grants in queue order", () => {
    const v = new Violations();
    expect(checkFifo([granted(0, 5, 0), granted(1, 6, 1), granted(2, 9, 2)], v)).toEqual({ outOfOrder: 0, notGranted: 0 });
    expect(v.total).toBe(0);
  });

  it("finds two waiters granted in swapped order (both are out of place)", () => {
    const v = new Violations();
    expect(checkFifo([granted(0, 6, 1), granted(1, 5, 0), granted(2, 9, 2)], v).outOfOrder).toBe(2);
    expect(v.list().map((x) => x.check)).toEqual(["fifo", "fifo"]);
  });

  it("finds a waiter that was not served", () => {
    const v = new Violations();
    expect(checkFifo([granted(0, 5, 0), { i: 1, error: "timeout" }, granted(2, 9, 1)], v)).toEqual({ outOfOrder: 0, notGranted: 1 });
    expect(v.list().map((x) => x.check)).toEqual(["all-waiters-served"]);
  });
});
