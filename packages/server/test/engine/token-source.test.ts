import { randomFillSync } from "node:crypto";
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

  it("grows its pool from 16 tokens to the full pool, four times over at each refill, drawing every byte once", () => {
    const sizes: number[] = [];
    const source = createRandomTokenSource(4096, (pool) => {
      sizes.push(pool.byteLength / 18);
      return randomFillSync(pool);
    });
    const seen = new Set<string>();
    const count = 16 + 64 + 256 + 1024 + 4096 + 1;
    for (let i = 0; i < count; i++) seen.add(source.next());
    expect(sizes).toEqual([16, 64, 256, 1024, 4096, 4096]);
    expect(seen.size).toBe(count);
  });

  it("encodes exactly what base64url encodes", () => {
    const source = createRandomTokenSource(1);
    const token = source.next();
    expect(Buffer.from(Buffer.from(token, "base64url")).toString("base64url")).toBe(token);
    expect(Buffer.from(token, "base64url")).toHaveLength(18);
  });
});
