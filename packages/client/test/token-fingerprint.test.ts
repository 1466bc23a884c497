import { describe, expect, it } from "vitest";
import { tokenFingerprint } from "../src/token-fingerprint.js";

/**
 * Fixed vectors (SHA-256 computed outside Node, with sha256sum), the same in the server's packages/server/test/engine/token-fingerprint.test.ts:
 * client and server keep their own copy of the function (neither imports the other), and a client
 * finds its token in the server's answers, logs and diagnostics only if both give the same digits.
 */
const VECTORS: readonly (readonly [string, string])[] = [
  ["lease-7f3a9c2e-token", "5b390d6b83b975a4"],
  ["é✓𝄞", "6ec60f62bb75f83e"], // UTF-8 bytes, astral character included
  ["", "e3b0c44298fc1c14"],
];

describe("tokenFingerprint", () => {
  it.each(VECTORS)("of %j is the first 16 hex digits of SHA-256 over its UTF-8 bytes (%s)", (token, expected) => {
    expect(tokenFingerprint(token)).toBe(expected);
  });
});
