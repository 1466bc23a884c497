import { describe, expect, it } from "vitest";
import { BOUND_EXTENSIONS_FENCED, boundEvents, checkBoundExtensionsFenced, type BoundEvents } from "../../src/cluster/check-bound-extensions.js";
import { Violations } from "../../src/violations.js";

const acq = (_server: number, shard: number, epoch: number, dbTimeUs: number): Record<string, unknown> => ({ msg: "acquisition committed", kind: "acquisition", shard, epoch, dbTimeUs });
const ext = (server: number, shard: number, epoch: number, dbTimeUs: number, from = 0, to = 2): Record<string, unknown> => ({
  msg: "bound extension committed",
  kind: "bound extension",
  namespace: `ns-${server}`,
  shard,
  epoch,
  from,
  to,
  dbTimeUs,
});

function check(events: BoundEvents): Violations {
  const v = new Violations();
  checkBoundExtensionsFenced(events, v);
  return v;
}

describe("bound extensions fenced by epoch", () => {
  it("reads the test-mode lines of every server and ignores the rest", () => {
    const events = boundEvents([[acq(0, 0, 1, 10), { msg: "shard acquired", shard: 0, epoch: 1 }, ext(0, 0, 1, 20, 0, 4)], [{ msg: "serve interval" }, acq(1, 0, 2, 30)]]);
    expect(events.acquisitions).toEqual([
      { server: 0, shard: 0, epoch: 1, dbTimeUs: 10 },
      { server: 1, shard: 0, epoch: 2, dbTimeUs: 30 },
    ]);
    expect(events.extensions).toEqual([{ server: 0, shard: 0, epoch: 1, dbTimeUs: 20, namespace: "ns-0", from: 0, to: 4 }]);
  });

  it("passes extensions before the next epoch's acquisition, and the new epoch's own", () => {
    const v = check(boundEvents([[acq(0, 0, 1, 10), ext(0, 0, 1, 20), ext(0, 0, 1, 29)], [acq(1, 0, 2, 30), ext(1, 0, 2, 31)]]));
    expect(v.total).toBe(0);
  });

  it("flags an extension of an older epoch committed after a newer epoch was acquired, even two epochs on", () => {
    const v = check(boundEvents([[acq(0, 0, 1, 10_000), ext(0, 0, 1, 35_000, 6, 8)], [acq(1, 0, 2, 30_000)], [acq(2, 0, 3, 33_000), ext(2, 0, 1, 40_000)]]));
    expect(v.count(BOUND_EXTENSIONS_FENCED)).toBe(2);
    expect(v.list()[0]!.detail).toBe("shard 0: server 0 extended the bound of ns-0 (6 → 8) under epoch 1 5.0 ms (database clock) after server 1 acquired epoch 2");
  });

  it("compares per shard: another shard's newer epoch says nothing", () => {
    const v = check(boundEvents([[acq(0, 0, 1, 10), ext(0, 0, 1, 50)], [acq(1, 1, 5, 20)]]));
    expect(v.total).toBe(0);
  });

  it("an extension at the very time of the acquisition counts as after it (the times are the statements' own)", () => {
    const v = check(boundEvents([[acq(0, 0, 1, 10), ext(0, 0, 1, 30)], [acq(1, 0, 2, 30)]]));
    expect(v.count(BOUND_EXTENSIONS_FENCED)).toBe(1);
  });
});
