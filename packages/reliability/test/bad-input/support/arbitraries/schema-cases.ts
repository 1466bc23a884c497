import fc from "fast-check";
import { INVALID, type BadCase } from "../cases.js";
import { postRequest, validBody, type Json, type JsonObject } from "./requests.js";
import { asSent, bodyAndSlot, isValidFor, replaceAt } from "./slots.js";

const anyJson = fc.jsonValue({ maxDepth: 3 }) as fc.Arbitrary<Json>;

/** One field of a valid body replaced by a value of the wrong type or out of range. */
export function wrongTypeCases(namespace: string): fc.Arbitrary<BadCase> {
  return bodyAndSlot(validBody).chain(({ body, slot }) =>
    anyJson
      .filter((v) => !isValidFor(slot.kind, asSent(v)))
      .map((wrong): BadCase => {
        const text = JSON.stringify(replaceAt(body.value, slot.path, wrong));
        return { category: "wrong-types", what: `${body.op} ${text.slice(0, 200)}`, pieces: [postRequest(namespace, body.op, text)], expected: INVALID };
      }),
  );
}

/** One field (or array entry) of a valid body set to `null`, which the protocol refuses. */
export function nullCases(namespace: string): fc.Arbitrary<BadCase> {
  return bodyAndSlot(validBody).map(({ body, slot }): BadCase => {
    const text = JSON.stringify(replaceAt(body.value, slot.path, null));
    return { category: "nulls", what: `${body.op} ${text}`, pieces: [postRequest(namespace, body.op, text)], expected: INVALID };
  });
}

/** Keys that name parts of every JavaScript object's prototype chain. */
export const PROTOTYPE_KEYS = ["__proto__", "constructor", "prototype", "toString", "hasOwnProperty", "valueOf", "__defineGetter__", "isPrototypeOf", "then"] as const;

const INJECT_KEY = "__leasehold_inject_key__";
const INJECT_VALUE = "__leasehold_inject_value__";

/** `text` with the placeholder member replaced by raw JSON (so `"__proto__"` is an own key on the wire). */
function inject(text: string, key: string, valueText: string): string {
  return text.replace(`"${INJECT_KEY}":"${INJECT_VALUE}"`, `${JSON.stringify(key)}:${valueText}`);
}

/** A prototype key added to the body object or to one lock spec: always an unknown field. */
export function prototypeKeyCases(namespace: string): fc.Arbitrary<BadCase> {
  return fc
    .tuple(validBody, fc.constantFrom(...PROTOTYPE_KEYS), anyJson, fc.nat())
    .map(([body, key, value, where]): BadCase => {
      const target: JsonObject = { ...body.value };
      const locks = target.locks;
      if (Array.isArray(locks) && where % 2 === 1) {
        const i = where % locks.length;
        target.locks = locks.map((spec, j) => (j === i ? { ...(spec as JsonObject), [INJECT_KEY]: INJECT_VALUE } : spec));
      } else target[INJECT_KEY] = INJECT_VALUE;
      const text = inject(JSON.stringify(target), key, JSON.stringify(value));
      return { category: "prototype-keys", what: `${body.op} ${text.slice(0, 200)}`, pieces: [postRequest(namespace, body.op, text)], expected: INVALID };
    });
}

/** Number texts that JSON allows but JavaScript bends: overflow, negative zero, fractions, huge ints. */
const numberText: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom("1e400", "-1e400", "-0", "-0.0", "1.5", "0.5", "9007199254740993", "9007199254740992", "1e21", "-1", "1E2", "1e-400", "1.0", "100000000000000000000000", "2e-7", "60000.000001", "1000001", "10001", "0e0", "-9007199254740993"),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((d) => String(d)),
  fc.bigInt({ min: -(2n ** 80n), max: 2n ** 80n }).map((b) => b.toString()),
  fc.tuple(fc.integer(), fc.nat({ max: 999 }), fc.integer({ min: -30, max: 30 })).map(([i, f, e]) => `${i}.${f}e${e}`),
);

const NUMBER_KINDS = new Set(["acquireTimeoutMs", "limit", "count", "txnCount"]);
const NUMBER_PLACEHOLDER = "__leasehold_number__";

/** An integer field given as a number text it must refuse (the values it would accept are skipped). */
export function numberCases(namespace: string): fc.Arbitrary<BadCase> {
  return bodyAndSlot(validBody.filter((b) => b.op !== "unlock" && b.op !== "refresh"))
    .filter(({ slot }) => NUMBER_KINDS.has(slot.kind))
    .chain(({ body, slot }) =>
      numberText
        .filter((t) => !isValidFor(slot.kind, JSON.parse(t)))
        .map((t): BadCase => {
          const text = JSON.stringify(replaceAt(body.value, slot.path, NUMBER_PLACEHOLDER)).replace(`"${NUMBER_PLACEHOLDER}"`, t);
          return { category: "numbers", what: `${body.op} ${text.slice(0, 200)}`, pieces: [postRequest(namespace, body.op, text)], expected: INVALID };
        }),
    );
}
