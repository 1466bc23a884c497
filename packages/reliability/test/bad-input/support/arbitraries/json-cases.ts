import fc from "fast-check";
import { INVALID, TOO_LARGE, type BadCase } from "../cases.js";
import { postRequest, validBody, type Op } from "./requests.js";

/**
 * True when `text` is not a JSON text at all (the server's first check after UTF-8). One leading
 * byte order mark is ignored, as RFC 8259 §8.1 allows and the server's UTF-8 decoder does.
 */
function unparsable(text: string): boolean {
  try {
    JSON.parse(text.replace(/^\uFEFF/, ""));
    return false;
  } catch {
    return true;
  }
}

const GARBAGE = ["}", "]", "{", "[", ",", ":", '"', "'", "\\", "\u0000", "\u001f", "NaN", "undefined", "//", "/*", "\uFEFF", "x", "tru", "nul", "0x1", "+1", ".5", "01"];

/**
 * Broken JSON made from a valid body: a proper prefix (a truncation), garbage spliced in, a BOM,
 * trailing garbage, single quotes, trailing commas. Only texts JSON.parse refuses are kept.
 */
export function malformedJsonCases(namespace: string): fc.Arbitrary<BadCase> {
  return fc
    .tuple(validBody, fc.nat(), fc.constantFrom(...GARBAGE), fc.constantFrom("truncate", "splice", "bom", "trailing", "quotes", "comma"))
    .map(([body, at, garbage, how]) => {
      const text = JSON.stringify(body.value);
      const pos = at % text.length;
      const broken =
        how === "truncate" ? text.slice(0, Math.max(1, pos)) :
        how === "splice" ? text.slice(0, pos) + garbage + text.slice(pos) :
        how === "bom" ? `\uFEFF\uFEFF${text}` :
        how === "trailing" ? `${text} ${garbage}` :
        how === "quotes" ? text.replace(/"/g, "'") :
        text.replace(/}$/, ",}");
      return { op: body.op, broken };
    })
    .filter(({ broken }) => unparsable(broken))
    .map(({ op, broken }): BadCase => ({ category: "malformed-json", what: `${op} ${JSON.stringify(broken.slice(0, 200))}`, pieces: [postRequest(namespace, op, broken)], expected: INVALID }));
}

/** Byte sequences that are not UTF-8: stray continuation bytes, overlongs, encoded surrogates, truncated sequences. */
const BAD_UTF8: readonly (readonly number[])[] = [[0xff], [0xfe], [0x80], [0xbf], [0xc0, 0x80], [0xc1, 0xbf], [0xe0, 0x80, 0x80], [0xed, 0xa0, 0x80], [0xed, 0xbf, 0xbf], [0xe2, 0x82], [0xf0, 0x9f, 0x98], [0xf4, 0x90, 0x80, 0x80], [0xf8, 0x88, 0x80, 0x80, 0x80], [0xc3]];

/** A valid body with a non-UTF-8 byte sequence spliced in anywhere (inside strings too). */
export function invalidUtf8Cases(namespace: string): fc.Arbitrary<BadCase> {
  return fc.tuple(validBody, fc.nat(), fc.constantFrom(...BAD_UTF8)).map(([body, at, bad]): BadCase => {
    const bytes = Buffer.from(JSON.stringify(body.value), "utf8");
    const pos = at % (bytes.length + 1);
    const broken = Buffer.concat([bytes.subarray(0, pos), Buffer.from(bad), bytes.subarray(pos)]);
    return { category: "invalid-utf8", what: `${body.op} ${broken.toString("hex").slice(0, 200)}`, pieces: [postRequest(namespace, body.op, broken)], expected: INVALID };
  });
}

const FIELD_OF: Readonly<Record<Op, string>> = { lock: "acquireTimeoutMs", unlock: "tokens", refresh: "tokens", timestamps: "count", "transactions/start": "count", "immutable-timestamp": "x" };

/** Arrays and objects nested 2..50,000 deep where a field's value belongs, balanced or left open. */
export function deepNestingCases(namespace: string): fc.Arbitrary<BadCase> {
  return fc
    .tuple(fc.constantFrom(...(Object.keys(FIELD_OF) as Op[])), fc.oneof(fc.integer({ min: 2, max: 40 }), fc.integer({ min: 2, max: 50_000 })), fc.constantFrom("[", '{"a":'), fc.boolean())
    .map(([op, depth, open, balanced]): BadCase => {
      const close = open === "[" ? "]" : "}";
      const nested = open.repeat(depth) + "1" + (balanced ? close.repeat(depth) : "");
      const text = `{"${FIELD_OF[op]}":${nested}}`;
      return { category: "deep-nesting", what: `${op} depth ${depth} ${open} balanced=${String(balanced)}`, pieces: [postRequest(namespace, op, text)], expected: INVALID };
    });
}

/** Arrays past the protocol's entry limits (10,000 locks or tokens) but under the 1 MiB body limit. */
export function hugeArrayCases(namespace: string): fc.Arbitrary<BadCase> {
  return fc
    .tuple(fc.constantFrom("locks", "tokens", "numbers-in-field", "empty-locks"), fc.integer({ min: 10_001, max: 12_000 }))
    .map(([kind, n]): BadCase => {
      let op: Op;
      let text: string;
      if (kind === "locks") {
        op = "lock";
        text = JSON.stringify({ locks: Array.from({ length: n }, (_, i) => ({ descriptor: `d${i}`, mode: "shared" })) });
      } else if (kind === "tokens") {
        op = "unlock";
        text = JSON.stringify({ tokens: Array.from({ length: n }, (_, i) => `t${i}`) });
      } else if (kind === "numbers-in-field") {
        op = "timestamps";
        text = `{"count":[${Array.from({ length: n * 5 }, (_, i) => i).join(",")}]}`;
      } else {
        op = "lock";
        text = '{"locks":[]}';
      }
      return { category: "huge-arrays", what: `${op} ${kind} n=${n} (${text.length} bytes)`, pieces: [postRequest(namespace, op, text)], expected: INVALID };
    });
}

/** Bodies over 1 MiB, valid JSON or not, sent in one write with their true content-length. */
export function oversizeBodyCases(namespace: string): fc.Arbitrary<BadCase> {
  return fc
    .tuple(fc.integer({ min: 1024 * 1024 + 1, max: 3 * 1024 * 1024 }), fc.constantFrom("padded", "tokens", "garbage"))
    .map(([size, kind]): BadCase => {
      let body: Buffer;
      if (kind === "padded") body = Buffer.from(`{"count":1}${" ".repeat(size - 11)}`);
      else if (kind === "tokens") {
        const tokens = Array.from({ length: Math.ceil(size / 40) }, (_, i) => `token-${i}-${"x".repeat(28)}`);
        body = Buffer.from(JSON.stringify({ tokens }));
      } else body = Buffer.alloc(size, 0xff);
      return { category: "oversize-bodies", what: `${kind} ${body.length} bytes`, pieces: [postRequest(namespace, kind === "tokens" ? "unlock" : "timestamps", body)], expected: TOO_LARGE };
    });
}
