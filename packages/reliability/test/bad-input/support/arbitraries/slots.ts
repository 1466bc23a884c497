import fc from "fast-check";
import type { Json, JsonObject, ValidBody } from "./requests.js";

/** What a field of a request must be; an independent oracle, written from docs/protocol.md. */
export type SlotKind = "requestId" | "locks" | "acquireTimeoutMs" | "behavior" | "clientDescription" | "descriptor" | "mode" | "limit" | "tokens" | "token" | "count" | "txnCount";

/** One field of a concrete body: where it is (keys and indexes) and what it must be. */
export interface Slot {
  readonly path: readonly (string | number)[];
  readonly kind: SlotKind;
}

function utf8WellFormedBytes(s: string): number {
  const bytes = Buffer.from(s, "utf8");
  // Lone surrogates have no UTF-8 encoding: Buffer writes U+FFFD instead, so the round trip differs.
  return bytes.toString("utf8") === s ? bytes.length : -1;
}

const isInt = (v: unknown, min: number, max: number): boolean => typeof v === "number" && Number.isInteger(v) && v >= min && v <= max;
const isString = (v: unknown, min: number, max: number): boolean => typeof v === "string" && v.length >= min && v.length <= max;
const isSpec = (v: unknown): boolean => {
  if (typeof v !== "object" || v === null || Array.isArray(v)) return false;
  const o = v as Record<string, unknown>;
  const keys = Object.keys(o);
  if (!keys.every((k) => k === "descriptor" || k === "mode" || k === "limit")) return false;
  if (!isValidFor("descriptor", o.descriptor) || !isValidFor("mode", o.mode)) return false;
  return o.mode === "permit" ? isInt(o.limit, 1, 1_000_000) : o.limit === undefined;
};

/** True when `value` is acceptable in a field of `kind` on its own (cross-field rules aside). */
export function isValidFor(kind: SlotKind, value: unknown): boolean {
  switch (kind) {
    case "requestId":
      return isString(value, 1, 128);
    case "clientDescription":
      return isString(value, 0, 256);
    case "acquireTimeoutMs":
      return isInt(value, 0, 60_000);
    case "behavior":
      return value === "all-or-none" || value === "as-many-as-possible";
    case "mode":
      return value === "exclusive" || value === "shared" || value === "permit";
    case "limit":
      return isInt(value, 1, 1_000_000);
    case "count":
      return isInt(value, 1, 10_000);
    case "txnCount":
      return isInt(value, 1, 1_000);
    case "descriptor": {
      if (typeof value !== "string") return false;
      const bytes = utf8WellFormedBytes(value);
      return bytes >= 1 && bytes <= 1024;
    }
    case "token":
      return isString(value, 1, 1024);
    case "tokens":
      return Array.isArray(value) && value.length >= 1 && value.length <= 10_000 && value.every((t) => isValidFor("token", t));
    case "locks": {
      if (!Array.isArray(value) || value.length < 1 || value.length > 10_000 || !value.every(isSpec)) return false;
      const names = value.map((s) => (s as { descriptor: string }).descriptor);
      return new Set(names).size === names.length;
    }
  }
}

/** Every field of a valid body, with its kind. */
export function slotsOf(body: ValidBody): Slot[] {
  const v = body.value;
  const slots: Slot[] = [];
  for (const key of Object.keys(v)) {
    if (key === "count") slots.push({ path: [key], kind: body.op === "transactions/start" ? "txnCount" : "count" });
    else if (key !== "max") slots.push({ path: [key], kind: key as SlotKind });
  }
  const locks = v.locks;
  if (Array.isArray(locks)) {
    locks.forEach((spec, i) => {
      for (const key of Object.keys(spec as JsonObject)) slots.push({ path: ["locks", i, key], kind: key as SlotKind });
    });
  }
  const tokens = v.tokens;
  if (Array.isArray(tokens)) tokens.forEach((_, i) => slots.push({ path: ["tokens", i], kind: "token" }));
  return slots;
}

/** A deep copy of `value` with the field at `path` replaced by `replacement`. */
export function replaceAt(value: Json, path: readonly (string | number)[], replacement: Json): Json {
  if (path.length === 0) return replacement;
  const [head, ...rest] = path;
  if (Array.isArray(value)) return value.map((item, i) => (i === head ? replaceAt(item, rest, replacement) : item));
  if (typeof value === "object" && value !== null && typeof head === "string") {
    const copy: JsonObject = {};
    for (const [k, item] of Object.entries(value)) copy[k] = k === head ? replaceAt(item, rest, replacement) : item;
    return copy;
  }
  return value;
}

/** A valid body and one of its fields, chosen at random (bodies without fields are skipped). */
export function bodyAndSlot(bodies: fc.Arbitrary<ValidBody>): fc.Arbitrary<{ body: ValidBody; slot: Slot }> {
  return bodies
    .filter((b) => slotsOf(b).length > 0)
    .chain((body) => fc.constantFrom(...slotsOf(body)).map((slot) => ({ body, slot })));
}

/** `value` after a JSON round trip (so -0 becomes 0), the way the server will see it. */
export function asSent(value: Json): unknown {
  return JSON.parse(JSON.stringify(value)) as unknown;
}
