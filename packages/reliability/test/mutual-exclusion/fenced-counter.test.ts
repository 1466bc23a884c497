import { describe, expect, it } from "vitest";
import { FencedCounter, UnfencedCounter, type CounterResource, type OperationSink, type ResourceAccess } from "../../src/fenced-resource/index.js";
import { checkHistory, HistoryRecorder, type HoldMode } from "../../src/history/index.js";

function access(holder: string, fencingToken: number, mode: HoldMode = "exclusive"): ResourceAccess {
  return { holder, fencingToken, mode };
}

/** A recorder on a clock that only moves when told, so recorded times are exact. */
function manualRecorder(): { recorder: HistoryRecorder; at: (t: number) => void } {
  let now = 0;
  return { recorder: new HistoryRecorder(() => now), at: (t) => (now = t) };
}

describe("FencedCounter", () => {
  it("accepts the highest token and the same token again, refuses lower ones for reads and writes", () => {
    const { recorder } = manualRecorder();
    const c = new FencedCounter("d", recorder);
    expect(c.write(access("a", 3), 1)).toEqual({ accepted: true, value: 1 });
    expect(c.read(access("a", 3))).toEqual({ accepted: true, value: 1 });
    expect(c.read(access("b", 5, "shared"))).toEqual({ accepted: true, value: 1 });
    expect(c.read(access("a", 3))).toEqual({ accepted: false, highestSeen: 5 });
    expect(c.write(access("a", 3), 2)).toEqual({ accepted: false, highestSeen: 5 });
    expect(c.value).toBe(1);
    expect(c.highestSeen).toBe(5);
  });

  it("records every operation, accepted or refused, with its time, holder, token and mode", () => {
    const { recorder, at } = manualRecorder();
    const c = new FencedCounter("d", recorder);
    at(10);
    c.read(access("new", 7));
    at(11);
    c.write(access("old", 6), 1);
    expect(recorder.history({ d: c.value }).operations).toEqual([
      { seq: 0, descriptor: "d", holder: "new", fencingToken: 7, mode: "exclusive", kind: "read", at: 10, accepted: true, value: 0 },
      { seq: 1, descriptor: "d", holder: "old", fencingToken: 6, mode: "exclusive", kind: "write", at: 11, accepted: false, value: 0 },
    ]);
  });
});

describe("UnfencedCounter", () => {
  it("accepts every operation whatever its token, and records it", () => {
    const ops: unknown[] = [];
    const sink: OperationSink = { operation: (op) => ops.push(op), now: () => 0 };
    const c = new UnfencedCounter("d", sink);
    c.write(access("new", 9), 5);
    expect(c.write(access("old", 1), 2)).toEqual({ accepted: true, value: 2 });
    expect(c.read(access("older", 0))).toEqual({ accepted: true, value: 2 });
    expect(c.value).toBe(2);
    expect(ops).toHaveLength(3);
  });
});

/**
 * The pause scenario by hand: `old` (token 1) reads the counter, pauses past its lease; `new`
 * (token 2) is granted, increments; `old` wakes up and writes what it computed before the pause.
 */
function pauseScenario(resource: (d: string, sink: HistoryRecorder) => CounterResource) {
  const { recorder, at } = manualRecorder();
  const c = resource("d", recorder);
  recorder.grant({ holder: "old", descriptor: "d", mode: "exclusive", fencingToken: 1, requestSentAt: 0, grantReceivedAt: 1, guaranteeEndsAt: 250 });
  at(2);
  const read = c.read(access("old", 1));
  recorder.grant({ holder: "new", descriptor: "d", mode: "exclusive", fencingToken: 2, requestSentAt: 100, grantReceivedAt: 600, guaranteeEndsAt: 350 });
  recorder.extendGuarantee("new", 850); // renewed on arrival, as the workload does
  at(601);
  const seen = c.read(access("new", 2));
  at(602);
  if (seen.accepted) c.write(access("new", 2), seen.value + 1);
  recorder.release("new", 603);
  at(1_200);
  if (read.accepted) c.write(access("old", 1), read.value + 1);
  recorder.release("old", 1_201);
  return checkHistory(recorder.history({ d: c.value }));
}

describe("fenced and unfenced counters under a pause, judged by the checker", () => {
  it("fenced: the paused write is refused and every rule holds", () => {
    expect(pauseScenario((d, sink) => new FencedCounter(d, sink)).violations).toBe(0);
  });

  it("unfenced: the paused write is accepted and overwrites the newer increment, which (c) and (d) catch", () => {
    const report = pauseScenario((d, sink) => new UnfencedCounter(d, sink));
    expect(report.staleRefused.violations).toBe(1);
    expect(report.noLostWrites.violations).toBe(1);
    expect(report.noLostWrites.examples[0]).toMatch(/final counter 1 < 2 acknowledged increments: 1 lost/);
    expect(report.leaseOverlap.violations + report.fencingOrder.violations + report.wellFormed.violations).toBe(0);
  });
});

describe("HistoryRecorder", () => {
  it("refuses a second grant for one holder, and only ever extends a guarantee", () => {
    const { recorder } = manualRecorder();
    const g = { holder: "h", descriptor: "d", mode: "shared" as const, fencingToken: 1, requestSentAt: 0, grantReceivedAt: 1, guaranteeEndsAt: 100 };
    recorder.grant(g);
    expect(() => recorder.grant(g)).toThrow(/granted twice/);
    recorder.extendGuarantee("h", 50);
    expect(recorder.history({}).grants[0]?.guaranteeEndsAt).toBe(100);
    recorder.extendGuarantee("h", 300);
    expect(recorder.history({}).grants[0]?.guaranteeEndsAt).toBe(300);
    expect(() => recorder.extendGuarantee("nobody", 1)).toThrow(/unknown holder/);
    expect(recorder.counts).toEqual({ grants: 1, releases: 0, operations: 0 });
  });
});
