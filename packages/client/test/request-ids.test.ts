import { describe, expect, it } from "vitest";
import { requestIdSource } from "../src/request-ids.js";

describe("requestIdSource", () => {
  it("never repeats within a source, and two sources do not share a prefix", () => {
    const a = requestIdSource();
    const b = requestIdSource();
    const seen = new Set<string>();
    for (let i = 0; i < 10_000; i++) seen.add(a());
    expect(seen.size).toBe(10_000);
    const prefixOf = (id: string) => id.slice(0, id.indexOf("."));
    expect(prefixOf(a())).not.toBe(prefixOf(b()));
    expect(a()).toMatch(/^[A-Za-z0-9_-]{16}\.[0-9a-z]+$/);
  });
});
