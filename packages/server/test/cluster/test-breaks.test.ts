import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { testBreaks, testEchoStandbyPort, testReplicationWindow, testReserveBlock, testStandbyFloor } from "../../src/cluster/test-breaks.js";

const logger = (level: string): { logger: pino.Logger; lines: Record<string, unknown>[] } => {
  const lines: Record<string, unknown>[] = [];
  const logger = pino({ level }, { write: (s: string) => void lines.push(JSON.parse(s) as Record<string, unknown>) });
  return { logger, lines };
};

const IGNORED = /is set but ignored: test knobs act only with --unsafe-test-knobs and --log-level debug/;

describe("test knobs (negative controls of the reliability suite)", () => {
  it("LEASEHOLD_TEST_RESERVE_BLOCK acts only with --unsafe-test-knobs and debug logs, and says so at warn", () => {
    const debug = logger("debug");
    expect(testReserveBlock(debug.logger, true, { LEASEHOLD_TEST_RESERVE_BLOCK: "2" })).toBe(2);
    expect(debug.lines.map((l) => [l.level, l.msg, l.reserveBlock])).toEqual([[40, "TEST ONLY: timestamp reservation block set by LEASEHOLD_TEST_RESERVE_BLOCK", 2]]);
    expect(testReserveBlock(debug.logger, true, {})).toBeUndefined();
    expect(testReserveBlock(debug.logger, true, { LEASEHOLD_TEST_RESERVE_BLOCK: "" })).toBeUndefined();
  });

  it("LEASEHOLD_TEST_REPLICATION_WINDOW acts only with both opt-ins, says so at warn, and refuses a bad value", () => {
    const debug = logger("debug");
    expect(testReplicationWindow(debug.logger, true, { LEASEHOLD_TEST_REPLICATION_WINDOW: "1" })).toBe(1);
    expect(debug.lines.map((l) => [l.level, l.msg, l.replicationWindow])).toEqual([[40, "TEST ONLY: replication messages in flight limited by LEASEHOLD_TEST_REPLICATION_WINDOW", 1]]);
    expect(() => testReplicationWindow(debug.logger, true, { LEASEHOLD_TEST_REPLICATION_WINDOW: "0" })).toThrow(/at least 1 \(got "0"\)/);
    const info = logger("info");
    expect(testReplicationWindow(info.logger, true, { LEASEHOLD_TEST_REPLICATION_WINDOW: "1" })).toBeUndefined();
    expect(info.lines[0]?.msg).toMatch(IGNORED);
  });

  it("a knob set without both opt-ins changes nothing, and the server says it ignored it", () => {
    for (const [level, enabled] of [["debug", false], ["info", true], ["info", false]] as const) {
      const l = logger(level);
      expect(testReserveBlock(l.logger, enabled, { LEASEHOLD_TEST_RESERVE_BLOCK: "2" })).toBeUndefined();
      expect(testBreaks(l.logger, enabled, { LEASEHOLD_TEST_BREAK: "gate" }).size).toBe(0);
      expect(l.lines.map((line) => [line.level, line.variable])).toEqual([
        [40, "LEASEHOLD_TEST_RESERVE_BLOCK"],
        [40, "LEASEHOLD_TEST_BREAK"],
      ]);
      for (const line of l.lines) expect(line.msg).toMatch(IGNORED);
    }
  });

  it("refuses a reservation block that is not an integer of at least 2, naming the variable", () => {
    const { logger: l } = logger("debug");
    for (const bad of ["1", "0", "-5", "2.5", "abc", "1e3", "99999999999999999999"]) {
      expect(() => testReserveBlock(l, true, { LEASEHOLD_TEST_RESERVE_BLOCK: bad }), bad).toThrow(/LEASEHOLD_TEST_RESERVE_BLOCK must be an integer of at least 2/);
    }
  });

  it("LEASEHOLD_TEST_ECHO_STANDBY_PORT acts with --unsafe-test-knobs at any log level (a debug access log would distort the benchmark), never without it", () => {
    for (const level of ["info", "debug"]) {
      const l = logger(level);
      expect(testEchoStandbyPort(l.logger, true, { LEASEHOLD_TEST_ECHO_STANDBY_PORT: "40123" })).toBe(40123);
      expect(l.lines.map((line) => [line.level, line.echoStandbyPort])).toEqual([[40, 40123]]);
      expect(String(l.lines[0]!.msg)).toMatch(/TEST ONLY: every standby replaced \(unsafe: it holds nothing\)/);
    }
    const off = logger("debug");
    expect(testEchoStandbyPort(off.logger, false, { LEASEHOLD_TEST_ECHO_STANDBY_PORT: "40123" })).toBeUndefined();
    expect(off.lines.map((line) => [line.level, line.variable])).toEqual([[40, "LEASEHOLD_TEST_ECHO_STANDBY_PORT"]]);
    expect(String(off.lines[0]!.msg)).toMatch(/is set but ignored: it acts only with --unsafe-test-knobs/);
    expect(testEchoStandbyPort(off.logger, true, {})).toBeUndefined();
    for (const bad of ["0", "65536", "-1", "80.5", "port", "1e3"]) {
      expect(() => testEchoStandbyPort(logger("info").logger, true, { LEASEHOLD_TEST_ECHO_STANDBY_PORT: bad }), bad).toThrow(/LEASEHOLD_TEST_ECHO_STANDBY_PORT must be a port number from 1 to 65535/);
    }
  });

  it("LEASEHOLD_TEST_STANDBY_FLOOR (benchmark only) acts with --unsafe-test-knobs at any log level, says so at warn, and takes only auth or decode", () => {
    for (const [level, value] of [["info", "auth"], ["debug", "decode"]] as const) {
      const l = logger(level);
      expect(testStandbyFloor(l.logger, true, { LEASEHOLD_TEST_STANDBY_FLOOR: value })).toBe(value);
      expect(l.lines.map((line) => [line.level, line.standbyFloor])).toEqual([[40, value]]);
      expect(String(l.lines[0]!.msg)).toMatch(/TEST ONLY: the standby answers entries without applying them/);
    }
    const off = logger("debug");
    expect(testStandbyFloor(off.logger, false, { LEASEHOLD_TEST_STANDBY_FLOOR: "auth" })).toBeUndefined();
    expect(off.lines.map((line) => [line.level, line.variable])).toEqual([[40, "LEASEHOLD_TEST_STANDBY_FLOOR"]]);
    expect(testStandbyFloor(off.logger, true, {})).toBeUndefined();
    for (const bad of ["Auth", "echo", "auth,decode", " "]) {
      expect(() => testStandbyFloor(logger("info").logger, true, { LEASEHOLD_TEST_STANDBY_FLOOR: bad }), bad).toThrow(/LEASEHOLD_TEST_STANDBY_FLOOR must be auth or decode/);
    }
  });

  it("LEASEHOLD_TEST_BREAK switches the named rules off and refuses unknown ones", () => {
    expect([...testBreaks(logger("debug").logger, true, { LEASEHOLD_TEST_BREAK: "gate, epoch-fence" })]).toEqual(["gate", "epoch-fence"]);
    expect(() => testBreaks(logger("debug").logger, true, { LEASEHOLD_TEST_BREAK: "gates" })).toThrow(/unknown rule "gates"/);
  });
});
