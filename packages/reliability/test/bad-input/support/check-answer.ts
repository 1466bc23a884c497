import { expect } from "vitest";
import { responseValidators } from "@leasehold/protocol";
import type { RawAnswer } from "./raw-http.js";
import type { BadCase } from "./cases.js";

function describeAnswer(answer: RawAnswer): string {
  const body = answer.body.toString("utf8").slice(0, 300);
  return `status ${String(answer.status)} timedOut=${String(answer.timedOut)} socketError=${String(answer.socketError)} body=${body}`;
}

/** Assert that `answer` has the protocol's error shape `{ error: { code, message, details } }` and `code`. */
export function expectErrorBody(answer: RawAnswer, code: string): void {
  expect(answer.headers["content-type"], describeAnswer(answer)).toMatch(/^application\/json/);
  const parsed = JSON.parse(answer.body.toString("utf8")) as unknown;
  expect(responseValidators.error.check(parsed), describeAnswer(answer)).toBe(true);
  const error = (parsed as { error: { code: string; message: string; details: unknown } }).error;
  expect(error.code, describeAnswer(answer)).toBe(code);
  expect(error.message.length).toBeGreaterThan(5);
  expect(typeof error.details === "object" && error.details !== null && !Array.isArray(error.details)).toBe(true);
}

/**
 * Assert what the server answered to one generated case: never a 5xx, never a hang, and exactly
 * the expected status, code and error body (or a closed connection where the case allows one).
 */
export function checkAnswer(testCase: BadCase, answer: RawAnswer): void {
  const context = `${testCase.category}: ${testCase.what} → ${describeAnswer(answer)}`;
  expect(answer.timedOut, context).toBe(false);
  if (answer.status !== null) expect(answer.status, context).toBeLessThan(500);
  const expected = testCase.expected;
  switch (expected.kind) {
    case "harmless":
      expect(answer.status, context).toBe(200);
      return;
    case "error-or-close":
      if (answer.status === null) return;
      expect(answer.status, context).toBe(expected.status);
      expectErrorBody(answer, expected.code);
      return;
    case "error":
      expect(answer.status, context).toBe(expected.status);
      expectErrorBody(answer, expected.code);
      if (expected.status === 405) expect(answer.headers.allow, context).toMatch(/GET|POST/);
      if (expected.status === 413) expect(answer.headers.connection, context).toBe("close");
  }
}
