import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { MAX_JSON_DEPTH, parseJsonBody } from "../../src/http/parse-json-body.js";

/** Nesting depth of a parsed JSON value, computed on the value (an oracle independent of the text scan). */
function depthOf(value: unknown): number {
  if (Array.isArray(value)) return 1 + value.reduce((m: number, v) => Math.max(m, depthOf(v)), 0);
  if (typeof value === "object" && value !== null) return 1 + Object.values(value).reduce((m: number, v) => Math.max(m, depthOf(v)), 0);
  return 0;
}

/** Wrap `value` in `levels` arrays/objects, alternating. */
function nest(value: unknown, levels: number): unknown {
  let v = value;
  for (let i = 0; i < levels; i++) v = i % 2 === 0 ? [v] : { k: v };
  return v;
}

describe("parseJsonBody's nesting limit", () => {
  it("refuses exactly the texts nested deeper than the limit, whatever the strings hold", () => {
    // Strings full of quotes, backslashes and brackets are what a text scan can get wrong.
    const tricky = fc.string({ unit: fc.constantFrom('"', "\\", "[", "]", "{", "}", "a", "\u00e9") });
    const value = fc.letrec((tie) => ({
      node: fc.oneof({ depthSize: "small" }, tricky, fc.integer(), fc.array(tie("node"), { maxLength: 3 }), fc.dictionary(tricky, tie("node"), { maxKeys: 3 })),
    })).node;
    fc.assert(
      fc.property(value, fc.integer({ min: 0, max: 40 }), (inner, levels) => {
        const v = nest(inner, levels);
        const text = JSON.stringify(v);
        const body = Buffer.from(text);
        if (depthOf(v) > MAX_JSON_DEPTH) {
          expect(() => parseJsonBody(body)).toThrow(/nests arrays and objects/);
        } else {
          expect(parseJsonBody(body)).toEqual(v);
        }
      }),
      { numRuns: 500 },
    );
  });
});
