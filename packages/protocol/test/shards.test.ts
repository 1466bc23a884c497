import { Buffer } from "node:buffer";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { fnv1a32, LIMITS, shardOf } from "../src/index.js";

/** A reference FNV-1a over Buffer's UTF-8 encoding, to check the hand-written encoder against. */
function reference(value: string): number {
  let hash = 2166136261;
  for (const byte of Buffer.from(value, "utf8")) hash = Math.imul(hash ^ byte, 16777619) >>> 0;
  return hash;
}

describe("fnv1a32", () => {
  it("matches the published FNV-1a 32-bit test vectors", () => {
    expect(fnv1a32("")).toBe(0x811c9dc5);
    expect(fnv1a32("a")).toBe(0xe40c292c);
    expect(fnv1a32("foobar")).toBe(0xbf9cf968);
  });

  it("hashes the UTF-8 bytes of any string, astral characters and lone surrogates included", () => {
    fc.assert(fc.property(fc.string({ unit: "binary" }), (s) => fnv1a32(s) === reference(s)));
    expect(fnv1a32("\ud800x")).toBe(reference("\ud800x"));
  });
});

describe("shardOf", () => {
  it("is the hash mod the shard count, and every namespace is in shard 0 of one shard", () => {
    expect(shardOf("billing", 64)).toBe(reference("billing") % 64);
    expect(shardOf("billing", 1)).toBe(0);
    fc.assert(fc.property(fc.string(), fc.integer({ min: 1, max: LIMITS.maxShards }), (ns, s) => {
      const shard = shardOf(ns, s);
      return shard >= 0 && shard < s && shard === reference(ns) % s;
    }));
  });

  it("refuses a shard count out of range", () => {
    expect(() => shardOf("a", 0)).toThrow(/shards must be an integer in 1\.\.4096, got 0/);
    expect(() => shardOf("a", 1.5)).toThrow(RangeError);
    expect(() => shardOf("a", LIMITS.maxShards + 1)).toThrow(RangeError);
  });
});
