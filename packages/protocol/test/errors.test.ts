import { describe, expect, it } from "vitest";
import { ERROR_CODES, ERROR_STATUS, isErrorCode, isLeaseholdError, LeaseholdError } from "../src/index.js";

describe("LeaseholdError", () => {
  it("carries code, status and details and serialises to the wire body", () => {
    const err = new LeaseholdError("REQUEST_ID_CONFLICT", "requestId r1 was used with a different body", { path: "requestId" });
    expect(err).toBeInstanceOf(Error);
    expect(err.status).toBe(409);
    expect(err.toJSON()).toEqual({
      error: { code: "REQUEST_ID_CONFLICT", message: "requestId r1 was used with a different body", details: { path: "requestId" } },
    });
    expect(isLeaseholdError(err, "REQUEST_ID_CONFLICT")).toBe(true);
    expect(isLeaseholdError(err, "NOT_FOUND")).toBe(false);
  });

  it("has every code of the protocol's table with its status", () => {
    const table = {
      INVALID_ARGUMENT: 400, UNAUTHENTICATED: 401, NOT_FOUND: 404, METHOD_NOT_ALLOWED: 405,
      REQUEST_ID_CONFLICT: 409, PAYLOAD_TOO_LARGE: 413, UNSUPPORTED_MEDIA_TYPE: 415, UNAVAILABLE: 503, INTERNAL: 500,
    };
    for (const [code, status] of Object.entries(table)) {
      expect(ERROR_CODES).toContain(code);
      expect(ERROR_STATUS[code as keyof typeof ERROR_STATUS]).toBe(status);
    }
    expect(isErrorCode("NOPE")).toBe(false);
    expect(isErrorCode("toString")).toBe(false);
  });
});
