import fc from "fast-check";
import { INVALID, type BadCase, type Expectation } from "../cases.js";
import { encodeRequest } from "../raw-http.js";
import { validBody, type ValidBody } from "./requests.js";

const INVALID_OR_CLOSE: Expectation = { kind: "error-or-close", status: 400, code: "INVALID_ARGUMENT" };

/** Bodies of every operation but `immutable-timestamp`, whose empty body is valid. */
const framed: fc.Arbitrary<ValidBody> = validBody.filter((b) => b.op !== "immutable-timestamp");

function head(namespace: string, op: string, headers: readonly (readonly [string, string])[]): Buffer {
  return encodeRequest({ method: "POST", target: `/v1/namespaces/${namespace}/${op}`, headers: [["content-type", "application/json"], ...headers], body: Buffer.alloc(0), contentLength: false });
}

function chunked(body: Buffer, sizes: readonly number[]): Buffer {
  const parts: Buffer[] = [];
  let at = 0;
  for (const size of sizes) {
    if (at >= body.length) break;
    const piece = body.subarray(at, at + Math.max(1, size));
    parts.push(Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from("\r\n"));
    at += piece.length;
  }
  if (at < body.length) parts.push(Buffer.from(`${(body.length - at).toString(16)}\r\n`), body.subarray(at), Buffer.from("\r\n"));
  return Buffer.concat(parts);
}

/**
 * Broken HTTP framing, written by hand: a content-length shorter than the body (the prefix is never
 * valid JSON: 400), longer than the body followed by a half-close (the body never completes: the
 * server may only close), both content-length and chunked (400 from the parser), and chunked
 * encodings that are well-formed around an invalid body (400) or broken mid-body (close or 400).
 */
export function framingCases(namespace: string): fc.Arbitrary<BadCase> {
  return fc
    .tuple(framed, fc.nat(), fc.array(fc.integer({ min: 1, max: 9 }), { minLength: 1, maxLength: 10 }), fc.constantFrom("short-length", "long-length", "length-and-chunked", "chunked-invalid", "bad-chunk-size", "chunk-overrun", "no-last-chunk", "chunk-extension-garbage"))
    .map(([body, at, sizes, kind]): BadCase => {
      const bytes = Buffer.from(JSON.stringify(body.value));
      const cut = at % bytes.length;
      const what = `${kind} ${body.op} ${bytes.length} bytes, cut ${cut}`;
      const base = { category: "framing" as const, what, variant: kind };
      switch (kind) {
        case "short-length":
          // The bytes past the declared length arrive as a second, broken request: node may close the
          // connection before the first answer is written (see docs/reliability.md).
          return { ...base, pieces: [head(namespace, body.op, [["content-length", String(cut)]]), bytes], expected: INVALID_OR_CLOSE };
        case "long-length":
          return { ...base, pieces: [head(namespace, body.op, [["content-length", String(bytes.length + 1 + cut)]]), bytes], expected: INVALID_OR_CLOSE, endAfterWrite: true };
        case "length-and-chunked":
          return { ...base, pieces: [head(namespace, body.op, [["content-length", String(bytes.length)], ["transfer-encoding", "chunked"]]), chunked(bytes, sizes), Buffer.from("0\r\n\r\n")], expected: INVALID };
        case "chunked-invalid": {
          const invalid = bytes.subarray(0, Math.max(1, cut));
          return { ...base, pieces: [head(namespace, body.op, [["transfer-encoding", "chunked"]]), Buffer.concat([chunked(invalid, sizes), Buffer.from("0\r\n\r\n")])], expected: INVALID };
        }
        case "bad-chunk-size":
          return { ...base, pieces: [head(namespace, body.op, [["transfer-encoding", "chunked"]]), Buffer.from(`zz\r\n${bytes.toString()}\r\n0\r\n\r\n`)], expected: INVALID_OR_CLOSE, endAfterWrite: true };
        case "chunk-overrun":
          return { ...base, pieces: [head(namespace, body.op, [["transfer-encoding", "chunked"]]), Buffer.from(`1\r\n${bytes.toString()}\r\n0\r\n\r\n`)], expected: INVALID_OR_CLOSE, endAfterWrite: true };
        case "no-last-chunk":
          return { ...base, pieces: [head(namespace, body.op, [["transfer-encoding", "chunked"]]), chunked(bytes, sizes)], expected: INVALID_OR_CLOSE, endAfterWrite: true };
        default:
          return { ...base, pieces: [head(namespace, body.op, [["transfer-encoding", "chunked"]]), Buffer.from(`${bytes.length.toString(16)};ext="\u0000\r\n${bytes.toString()}\r\n0\r\n\r\n`, "latin1")], expected: INVALID_OR_CLOSE, endAfterWrite: true };
      }
    });
}

/**
 * Slow clients: a request whose body (or whole head) is trickled a few bytes at a time with a pause
 * between writes. Invalid bodies must still get their 400, and unlocks of unknown tokens their 200.
 */
export function slowCases(namespace: string, category: "slow-bodies" | "slow-headers"): fc.Arbitrary<BadCase> {
  const body = fc.oneof(
    fc.constantFrom('{"count":0}', '{"locks":[{"descriptor":"d","mode":"exclusive","limit":2}]}', '{"locks":[', '{"tokens":[null]}').map((text) => ({ op: text.includes("tokens") ? "unlock" : text.includes("count") ? "timestamps" : "lock", text, harmless: false })),
    fc.array(fc.string({ minLength: 1, maxLength: 10 }), { minLength: 1, maxLength: 3 }).map((tokens) => ({ op: "refresh", text: JSON.stringify({ tokens }), harmless: true })),
  );
  return fc.tuple(body, fc.integer({ min: 1, max: 4 }), fc.integer({ min: 1, max: 5 })).map(([{ op, text, harmless }, step, delayMs]): BadCase => {
    const request = encodeRequest({ method: "POST", target: `/v1/namespaces/${namespace}/${op}`, headers: [["content-type", "application/json"]], body: Buffer.from(text) });
    const split = request.indexOf("\r\n\r\n") + 4;
    const [trickled, rest] = category === "slow-bodies" ? [request.subarray(split), request.subarray(0, split)] : [request.subarray(0, split), request.subarray(split)];
    const pieces: Buffer[] = [];
    for (let i = 0; i < trickled.length; i += step) pieces.push(trickled.subarray(i, i + step));
    const ordered = category === "slow-bodies" ? [rest, ...pieces] : [...pieces, rest];
    return { category, what: `${op} ${text} in ${pieces.length} writes ${delayMs} ms apart`, pieces: ordered, delayMs, expected: harmless ? { kind: "harmless" } : INVALID };
  });
}
