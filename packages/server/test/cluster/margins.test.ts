import { describe, expect, it } from "vitest";
import { gateMargin, leaseWaitEnd } from "../../src/cluster/margins.js";

describe("margins against clock-rate differences", () => {
  it("the gate closes a tenth of the leader lease early, at least 20 ms", () => {
    expect(gateMargin(3_000)).toBe(300);
    expect(gateMargin(100)).toBe(20);
  });

  it("a hand-over's lease-wait ends after the earlier leaders' lock leases plus a margin: a tenth of the wait, at least the gate's", () => {
    // 10 s lock leases measured on the earlier leader's clock may last 10% longer on this one's.
    expect(leaseWaitEnd(5_000, 10_000, 3_000)).toBe(5_000 + 10_000 + 1_000);
    // A short wait still gets the gate's margin.
    expect(leaseWaitEnd(5_000, 1_000, 3_000)).toBe(5_000 + 1_000 + 300);
    expect(leaseWaitEnd(0, 700, 500)).toBe(700 + 70);
    // No earlier leader declared a lock lease (a shard never led): nothing to wait for.
    expect(leaseWaitEnd(5_000, 0, 3_000)).toBe(5_000);
  });
});
