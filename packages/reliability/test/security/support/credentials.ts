import { randomBytes } from "node:crypto";
import fc from "fast-check";

/** The bearer tokens of the run's auth table: `admin` for `"*"`, the others for one namespace each. */
export interface Secrets {
  readonly admin: string;
  readonly billing: string;
  readonly orders: string;
}

/** Fresh random bearer tokens (48 visible ASCII characters each), so nothing can match them by accident. */
export function makeSecrets(): Secrets {
  const token = (name: string): string => `${name}-${randomBytes(20).toString("hex")}`;
  return { admin: token("admin"), billing: token("billing"), orders: token("orders") };
}

/** The auth table the server is started with. */
export function authTable(secrets: Secrets): Record<string, string[]> {
  return { "*": [secrets.admin], billing: [secrets.billing], orders: [secrets.orders] };
}

/** How a refused credential is wrong; each kind is counted apart. */
export type RefusedKind = "missing" | "malformed" | "wrong" | "other-namespace";

/** An `authorization` header (or none) and what it is. */
export interface Credential {
  readonly kind: RefusedKind | "valid";
  /** A short description for the report of a failure (never the secret itself). */
  readonly what: string;
  /** The header value, written as latin1 bytes; null: no header. */
  readonly header: string | null;
}

/**
 * The form docs/operations.md asks clients to send, `Bearer <token>`, with the scheme in any case
 * (RFC 7235 §2.1) and one or more spaces. Used only to keep generated "malformed" and "wrong"
 * values from being accidentally valid; what the server must answer to them is fixed (401).
 */
function presents(header: string, token: string): boolean {
  const match = /^bearer +(\S+) *$/i.exec(header.replace(/^[ \t]+|[ \t]+$/g, ""));
  return match?.[1] === token;
}

function allTokens(secrets: Secrets): string[] {
  return [secrets.admin, secrets.billing, secrets.orders];
}

/** `Bearer` in some case, followed by 1..3 spaces: every way a valid header may begin. */
const scheme = fc.tuple(fc.constantFrom("Bearer", "bearer", "BEARER", "BeArEr"), fc.integer({ min: 1, max: 3 })).map(([name, spaces]) => `${name}${" ".repeat(spaces)}`);

/** Headers that are not of the form `Bearer <token>`, many of them built around a real token. */
function malformed(secrets: Secrets): fc.Arbitrary<Credential> {
  const token = fc.constantFrom(...allTokens(secrets));
  const around = fc
    .tuple(
      token,
      fc.constantFrom(
        "bare",
        "basic-b64",
        "basic",
        "token-scheme",
        "colon",
        "equals",
        "glued",
        "tab",
        "nbsp-before",
        "nbsp-after",
        "twice",
        "comma-list",
        "semicolon",
        "prefixed-scheme",
        "misspelt-scheme",
        "short-scheme",
        "latin1-suffix",
      ),
    )
    .map(([t, how]): Credential => {
      const header =
        how === "bare" ? t :
        how === "basic-b64" ? `Basic ${Buffer.from(`user:${t}`).toString("base64")}` :
        how === "basic" ? `Basic ${t}` :
        how === "token-scheme" ? `Token ${t}` :
        how === "colon" ? `Bearer:${t}` :
        how === "equals" ? `Bearer=${t}` :
        how === "glued" ? `Bearer${t}` :
        how === "tab" ? `Bearer\t${t}` :
        how === "nbsp-before" ? `Bearer\u00a0${t}` :
        how === "nbsp-after" ? `Bearer ${t}\u00a0` :
        how === "twice" ? `Bearer ${t} ${t}` :
        how === "comma-list" ? `Bearer ${t}, Bearer ${t}` :
        how === "semicolon" ? `Bearer ${t};` :
        how === "prefixed-scheme" ? `X-Bearer ${t}` :
        how === "misspelt-scheme" ? `Bearerr ${t}` :
        how === "short-scheme" ? `Bear ${t}` :
        `Bearer ${t}\u00e9`;
      return { kind: "malformed", what: `malformed (${how})`, header };
    });
  const fixed = fc.constantFrom("", "Bearer", "Bearer ", "bearer", "Basic", "null", "undefined", "Bearer null", "Bearer undefined").map((header): Credential => ({ kind: "malformed", what: `malformed ${JSON.stringify(header)}`, header }));
  const printable = fc.stringMatching(/^[\x21-\x7e][\x20-\x7e]{0,80}$/).map((header): Credential => ({ kind: "malformed", what: "malformed (random printable)", header }));
  const latin1 = fc.array(fc.integer({ min: 0x80, max: 0xff }), { minLength: 1, maxLength: 40 }).map((codes): Credential => ({ kind: "malformed", what: "malformed (latin1 bytes)", header: String.fromCharCode(...codes) }));
  return fc.oneof({ arbitrary: around, weight: 6 }, { arbitrary: fixed, weight: 1 }, { arbitrary: printable, weight: 2 }, { arbitrary: latin1, weight: 1 });
}

/** `Bearer <w>` where `w` is not a token of the table: near misses of real tokens, random and very long ones. */
function wrong(secrets: Secrets): fc.Arbitrary<Credential> {
  const token = fc.constantFrom(...allTokens(secrets));
  const nearMiss = fc
    .tuple(token, fc.nat(), fc.constantFrom("drop-last", "drop-first", "append", "prepend", "flip-case", "replace", "doubled", "reversed", "upper"), fc.constantFrom(..."abcdefXYZ019-_~"))
    .map(([t, at, how, c]) => {
      const i = at % t.length;
      const w =
        how === "drop-last" ? t.slice(0, -1) :
        how === "drop-first" ? t.slice(1) :
        how === "append" ? t + c :
        how === "prepend" ? c + t :
        how === "flip-case" ? t.slice(0, i) + (t[i] === t[i]?.toUpperCase() ? (t[i] ?? "").toLowerCase() : (t[i] ?? "").toUpperCase()) + t.slice(i + 1) :
        how === "replace" ? t.slice(0, i) + c + t.slice(i + 1) :
        how === "doubled" ? t + t :
        how === "reversed" ? [...t].reverse().join("") :
        t.toUpperCase();
      return { w, what: `wrong (near miss: ${how})` };
    });
  const random = fc.stringMatching(/^[\x21-\x7e]{16,64}$/).map((w) => ({ w, what: "wrong (random)" }));
  const short = fc.stringMatching(/^[\x21-\x7e]{1,15}$/).map((w) => ({ w, what: "wrong (short)" }));
  const long = fc.integer({ min: 1_000, max: 6_000 }).map((n) => ({ w: "t".repeat(n), what: `wrong (${n} characters)` }));
  const known = new Set(allTokens(secrets));
  return fc
    .tuple(fc.oneof({ arbitrary: nearMiss, weight: 5 }, { arbitrary: random, weight: 2 }, { arbitrary: short, weight: 1 }, { arbitrary: long, weight: 1 }), scheme)
    .filter(([{ w }]) => !known.has(w))
    .map(([{ w, what }, s]): Credential => ({ kind: "wrong", what, header: `${s}${w}` }));
}

/** A valid token of another namespace, in a valid form: `orders`' token on billing or on a never-used namespace. */
function otherNamespace(secrets: Secrets, scoped: readonly string[]): fc.Arbitrary<Credential> {
  return fc.tuple(fc.constantFrom(...scoped), scheme).map(([t, s]): Credential => ({ kind: "other-namespace", what: `another namespace's token (${t === secrets.orders ? "orders" : "billing"})`, header: `${s}${t}` }));
}

/**
 * Credentials the server must refuse with 401 on an operation of `billing` and of a never-used
 * namespace alike (and, with `forMetrics`, on `GET /metrics`, where only a `"*"` token passes).
 */
export function refusedCredential(secrets: Secrets, forMetrics = false): fc.Arbitrary<Credential> {
  const none = fc.constant<Credential>({ kind: "missing", what: "no authorization header", header: null });
  const scoped = forMetrics ? [secrets.billing, secrets.orders] : [secrets.orders];
  return fc
    .oneof({ arbitrary: none, weight: 2 }, { arbitrary: malformed(secrets), weight: 4 }, { arbitrary: wrong(secrets), weight: 4 }, { arbitrary: otherNamespace(secrets, scoped), weight: 2 })
    .filter((c) => c.header === null || !allTokens(secrets).some((t) => presents(c.header ?? "", t) && (t === secrets.admin || (!forMetrics && t === secrets.billing))));
}

/** A valid header for `token`: any case of the scheme, 1..3 spaces, 0..2 trailing spaces (optional whitespace). */
export function validCredential(token: string, name: string): fc.Arbitrary<Credential> {
  return fc.tuple(scheme, fc.integer({ min: 0, max: 2 })).map(([s, trailing]): Credential => ({ kind: "valid", what: `${name} token as ${JSON.stringify(s + "…" + " ".repeat(trailing))}`, header: `${s}${token}${" ".repeat(trailing)}` }));
}
