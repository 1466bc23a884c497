import { describe, expect, it } from "vitest";
import { createRandomTokenSource } from "../../src/engine/token-source.js";

describe("random token source", () => {
  it("mints distinct 24-character base64url tokens (144 bits) across pool refills", () => {
    const source = createRandomTokenSource(16);
    const seen = new Set<string>();
    for (let i = 0; i < 10_000; i++) {
      const token = source.next();
      expect(token).toMatch(/^[A-Za-z0-9_-]{24}$/);
      seen.add(token);
    }
    expect(seen.size).toBe(10_000);
  });

  it("encodes exactly what base64url encodes", () => {
    const source = createRandomTokenSource(1);
    const token = source.next();
    expect(Buffer.from(Buffer.from(token, "base64url")).toString("base64url")).toBe(token);
    expect(Buffer.from(token, "base64url")).toHaveLength(18);
  });
});
