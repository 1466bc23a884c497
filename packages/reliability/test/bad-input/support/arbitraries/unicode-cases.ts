import fc from "fast-check";
import { INVALID, type BadCase } from "../cases.js";
import { postRequest } from "./requests.js";

/** Characters that stress string handling: emoji (with ZWJ and skin tones), combining marks, non-characters, RTL, CJK, NUL. */
const TRICKY = ["😀", "👩‍👩‍👧", "👍🏽", "🇺🇳", "e\u0301", "\u0301", "\u20dd", "\ufffe", "\uffff", "\ufdd0", "\u{1fffe}", "\u{10ffff}", "\u202e", "\u200b", "\u200d", "日本", "\u0000", "\ufeff", "Ω", "ß", "ﬁ"];
const trickyString = fc.array(fc.oneof(fc.constantFrom(...TRICKY), fc.string({ maxLength: 3 })), { minLength: 1, maxLength: 8 }).map((parts) => parts.join(""));

/** A string with one lone surrogate (high or low) spliced in; it can never pair up (see the note in the suite). */
const withLoneSurrogate = fc
  .tuple(trickyString, fc.nat(), fc.oneof(fc.integer({ min: 0xd800, max: 0xdbff }), fc.integer({ min: 0xdc00, max: 0xdfff })))
  .map(([s, at, unit]) => {
    const pos = at % (s.length + 1);
    return s.slice(0, pos) + String.fromCharCode(unit) + s.slice(pos);
  })
  .filter((s) => Buffer.from(s, "utf8").toString("utf8") !== s);

/** Look-alikes of the protocol's enum values: combining marks, Cyrillic letters, full-width forms, zero-width joiners, case. */
const MODE_LOOKALIKES = ["exclusive\u0301", "excl\u0456sive", "ｅｘｃｌｕｓｉｖｅ", "shared\u200d", "\u200bshared", "Shared", "PERMIT", "permit\u0000", "exclusive ", "ｓｈａｒｅｄ", "sh\u0430red"];

/**
 * Unicode edge cases where the protocol draws a line: lone surrogates (sent as `\ud800` escapes) in
 * descriptors, enum look-alikes in `mode`, unicode field names, unicode namespaces in the path. All
 * refused with 400; valid unicode descriptors are checked to be accepted by a separate test.
 */
export function unicodeCases(namespace: string): fc.Arbitrary<BadCase> {
  const loneInDescriptor = fc.tuple(withLoneSurrogate, fc.constantFrom("exclusive", "shared")).map(([d, mode]) => ({ op: "lock", path: namespace, text: JSON.stringify({ locks: [{ descriptor: "ok", mode: "shared" }, { descriptor: d, mode }] }) }));
  const lookalikeMode = fc.tuple(trickyString, fc.constantFrom(...MODE_LOOKALIKES)).map(([d, mode]) => ({ op: "lock", path: namespace, text: JSON.stringify({ locks: [{ descriptor: d, mode }] }) }));
  const unicodeKey = fc.tuple(fc.oneof(trickyString, withLoneSurrogate), fc.constantFrom("lock", "timestamps", "immutable-timestamp")).map(([key, op]) => {
    const base: Record<string, unknown> = op === "lock" ? { locks: [{ descriptor: "d", mode: "shared" }] } : op === "timestamps" ? { count: 1 } : {};
    return { op, path: namespace, text: JSON.stringify({ ...base, [key]: 1 }) };
  });
  const unicodeNamespace = trickyString.filter((s) => !/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/.test(`ns-${s}`)).map((s) => ({ op: "timestamps", path: encodeURIComponent(`ns-${s}`), text: '{"count":1}' }));
  return fc.oneof(loneInDescriptor, lookalikeMode, unicodeKey, unicodeNamespace).map(({ op, path, text }): BadCase => ({
    category: "unicode",
    what: `${path.slice(0, 60)}/${op} ${text.slice(0, 200)}`,
    pieces: [postRequest(path, op, text)],
    expected: INVALID,
  }));
}

/** Characters of 1, 2, 3 and 4 UTF-8 bytes. */
const UNITS = ["a", "é", "€", "😀", "\u0301", "\u{10ffff}"];

/** A well-formed string of exactly `bytes` UTF-8 bytes, from the units picked by `seed`. */
export function stringOfBytes(bytes: number, seed: readonly number[]): string {
  let out = "";
  let size = 0;
  let i = 0;
  while (size < bytes) {
    const unit = UNITS[(seed[i % Math.max(1, seed.length)] ?? 0) % UNITS.length] ?? "a";
    i++;
    const n = Buffer.byteLength(unit);
    if (size + n > bytes) {
      out += "a".repeat(bytes - size);
      size = bytes;
    } else {
      out += unit;
      size += n;
    }
  }
  return out;
}

/** Descriptors of 1,025..4,096 UTF-8 bytes (often under 1,024 characters), alone or among valid ones. */
export function oversizeDescriptorCases(namespace: string): fc.Arbitrary<BadCase> {
  return fc
    .tuple(fc.integer({ min: 1025, max: 4096 }), fc.array(fc.nat(), { minLength: 1, maxLength: 8 }), fc.boolean())
    .map(([bytes, seed, alone]): BadCase => {
      const descriptor = stringOfBytes(bytes, seed);
      const locks = alone ? [{ descriptor, mode: "exclusive" }] : [{ descriptor: "fine", mode: "shared" }, { descriptor, mode: "shared" }];
      return {
        category: "oversize-descriptors",
        what: `${bytes} bytes, ${descriptor.length} UTF-16 units, alone=${String(alone)}`,
        pieces: [postRequest(namespace, "lock", JSON.stringify({ locks }))],
        expected: INVALID,
      };
    });
}
