import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { testBreaks, testReserveBlock } from "../../src/cluster/test-breaks.js";

const logger = (level: string): { logger: pino.Logger; lines: Record<string, unknown>[] } => {
  const lines: Record<string, unknown>[] = [];
  const logger = pino({ level }, { write: (s: string) => void lines.push(JSON.parse(s) as Record<string, unknown>) });
  return { logger, lines };
};

describe("test-mode knobs (negative controls of the reliability suite)", () => {
  it("LEASEHOLD_TEST_RESERVE_BLOCK sets the reservation block in test mode only, and says so at warn", () => {
    const debug = logger("debug");
    expect(testReserveBlock(debug.logger, { LEASEHOLD_TEST_RESERVE_BLOCK: "2" })).toBe(2);
    expect(debug.lines.map((l) => [l.level, l.msg, l.reserveBlock])).toEqual([[40, "TEST ONLY: timestamp reservation block set by LEASEHOLD_TEST_RESERVE_BLOCK", 2]]);
    const info = logger("info");
    expect(testReserveBlock(info.logger, { LEASEHOLD_TEST_RESERVE_BLOCK: "2" })).toBeUndefined();
    expect(info.lines).toEqual([]);
    expect(testReserveBlock(debug.logger, {})).toBeUndefined();
    expect(testReserveBlock(debug.logger, { LEASEHOLD_TEST_RESERVE_BLOCK: "" })).toBeUndefined();
  });

  it("refuses a reservation block that is not an integer of at least 2, naming the variable", () => {
    const { logger: l } = logger("debug");
    for (const bad of ["1", "0", "-5", "2.5", "abc", "1e3", "99999999999999999999"]) {
      expect(() => testReserveBlock(l, { LEASEHOLD_TEST_RESERVE_BLOCK: bad }), bad).toThrow(/LEASEHOLD_TEST_RESERVE_BLOCK must be an integer of at least 2/);
    }
  });

  it("LEASEHOLD_TEST_BREAK switches rules off in test mode only and refuses unknown ones", () => {
    expect([...testBreaks(logger("debug").logger, { LEASEHOLD_TEST_BREAK: "gate, epoch-fence" })]).toEqual(["gate", "epoch-fence"]);
    expect(testBreaks(logger("info").logger, { LEASEHOLD_TEST_BREAK: "gate" }).size).toBe(0);
    expect(() => testBreaks(logger("debug").logger, { LEASEHOLD_TEST_BREAK: "gates" })).toThrow(/unknown rule "gates"/);
  });
});
