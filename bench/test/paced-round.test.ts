import { describe, expect, it } from "vitest";
import { pacedSlotMs } from "../src/peers/paced-round.js";

describe("pacedSlotMs", () => {
  it("paces each of 64 callers to 125 pairs/s for 8,000 pairs/s in all", () => {
    expect(pacedSlotMs(0, 1, 64, 8_000) - pacedSlotMs(0, 0, 64, 8_000)).toBeCloseTo(8);
  });

  it("spreads the callers evenly over one period", () => {
    const starts = Array.from({ length: 64 }, (_, c) => pacedSlotMs(c, 0, 64, 8_000));
    expect(starts[0]).toBe(0);
    expect(starts[1]).toBeCloseTo(0.125);
    expect(starts[63]).toBeCloseTo(7.875);
  });

  it("has every caller's slots in one second add up to the rate", () => {
    let slots = 0;
    for (let c = 0; c < 64; c++) for (let n = 0; pacedSlotMs(c, n, 64, 8_000) < 1_000; n++) slots++;
    expect(slots).toBe(8_000);
  });
});
