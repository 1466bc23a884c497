import { describe, expect, it } from "vitest";
import { ShardCountMismatchError } from "../../src/cluster/coordinator.js";
import { isPermanentJoinError } from "../../src/cluster/join-errors.js";

const pgError = (code: string): Error => Object.assign(new Error(`pg ${code}`), { code });

describe("isPermanentJoinError", () => {
  it("ends the start for errors waiting cannot fix: shard count, credentials, no database, no permission, a bad port", () => {
    expect(isPermanentJoinError(new ShardCountMismatchError(8, 16))).toBe(true);
    for (const code of ["28000", "28P01", "3D000", "42501", "42P01"]) expect(isPermanentJoinError(pgError(code))).toBe(true);
    expect(isPermanentJoinError(new RangeError('options.port should be >= 0 and < 65536. Received type number (99999).'))).toBe(true);
  });

  it("retries what the database coming back fixes: refused, timed out, cut, starting up, shutting down, DNS", () => {
    for (const code of ["ECONNREFUSED", "ETIMEDOUT", "ECONNRESET", "ENOTFOUND", "EAI_AGAIN", "57P03", "57P01", "53300", "08006"]) {
      expect(isPermanentJoinError(pgError(code))).toBe(false);
    }
    expect(isPermanentJoinError(new Error("timeout expired"))).toBe(false);
    expect(isPermanentJoinError(new Error("Connection terminated unexpectedly"))).toBe(false);
    expect(isPermanentJoinError("a string")).toBe(false);
    // An error of unknown kind from inside the driver may pass: retried (and logged), not fatal.
    expect(isPermanentJoinError(new TypeError("Cannot read properties of null (reading 'write')"))).toBe(false);
  });
});
