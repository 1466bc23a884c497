import { METHODS } from "node:http";
import fc from "fast-check";
import { INVALID, NOT_ALLOWED, NOT_FOUND, UNSUPPORTED, type BadCase } from "../cases.js";
import { encodeRequest } from "../raw-http.js";
import { postRequest, validBody, validLockBody, type ValidBody } from "./requests.js";
import { isValidRawNamespace, routeOf } from "./route-oracle.js";

/** Bodies that change state if they are ever served: routing and content-type mistakes must stop them first. */
const stateChanging: fc.Arbitrary<ValidBody> = fc.oneof(validLockBody, validBody.filter((b) => b.op === "timestamps" || b.op === "transactions/start"));

const NOT_JSON_TYPES = ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "application/xml", "text/json", "application/jsonp", "application/json-patch+json", "application/ld+json", "application/problem+json", "application", "json", "*/*", "application/*", "", "application/json x", "application/json, text/plain", "application/javascript", "application/octet-stream", "application\\json", "application/json\u00a0"];
const BAD_CHARSETS = ["latin1", "iso-8859-1", "utf-16", "UTF-16LE", "us-ascii", "utf-32", "", "utf-7", "windows-1252", "utf_8", "utf-8-sig", "cesu-8", '"utf-16"', "ucs-2"];
const token = fc.stringMatching(/^[a-z][a-z0-9.+-]{0,15}$/);

/** Content types other than `application/json` (or with a charset other than UTF-8), on bodies that would otherwise be served. */
export function contentTypeCases(namespace: string): fc.Arbitrary<BadCase> {
  const mediaType = fc.oneof(
    fc.constantFrom(...NOT_JSON_TYPES),
    fc.tuple(token, token).map(([a, b]) => `${a}/${b}`).filter((t) => t !== "application/json"),
    fc.constantFrom(...BAD_CHARSETS).map((cs) => `application/json; charset=${cs}`),
    fc.tuple(token.filter((t) => !["utf-8", "utf8"].includes(t)), fc.constantFrom("", " ", "q=1; ")).map(([cs, extra]) => `Application/JSON;${extra}charset=${cs}`),
    fc.constant(null),
  );
  return fc.tuple(stateChanging, mediaType).map(([body, type]): BadCase => ({
    category: "content-types",
    what: `${body.op} content-type ${JSON.stringify(type)}`,
    pieces: [postRequest(namespace, body.op, JSON.stringify(body.value), { contentType: type })],
    expected: UNSUPPORTED,
  }));
}

const headerName = fc.stringMatching(/^x-[A-Za-z0-9-]{1,30}$/);
const headerValue = fc.stringMatching(/^[\x21-\x7e][\x20-\x7e]{0,200}$/);
const MALFORMED_LINES = ["no-colon-line", " leading-space: x", "bad name: x", "x-nul: a\u0000b", "x-cr: a\rb", "x-fold: a\r\n  folded", "content-length: 5", "content-length: abc", "transfer-encoding: chunked", "content-length: -1", "content-length: 1e3", "content-length: 0x10", ": empty-name", "x-\u00ff: latin1", "x-del\u007f: y"];

/** Random extra headers, malformed header lines, oversize and overlong header blocks; the body is invalid either way. */
export function headerCases(namespace: string): fc.Arbitrary<BadCase> {
  const invalidBody = '{"count":0}';
  const extra = fc.array(fc.tuple(headerName, headerValue), { maxLength: 20 }).map((headers) => ({ what: `${headers.length} extra headers`, request: postRequest(namespace, "timestamps", invalidBody, { extraHeaders: headers }) }));
  const malformed = fc.constantFrom(...MALFORMED_LINES).map((line) => {
    const request = postRequest(namespace, "timestamps", invalidBody);
    const at = request.indexOf("\r\n") + 2;
    return { what: `header line ${JSON.stringify(line)}`, request: Buffer.concat([request.subarray(0, at), Buffer.from(`${line}\r\n`, "latin1"), request.subarray(at)]) };
  });
  const oversize = fc.integer({ min: 17 * 1024, max: 80 * 1024 }).map((n) => ({ what: `one ${n}-byte header`, request: postRequest(namespace, "timestamps", invalidBody, { extraHeaders: [["x-big", "v".repeat(n)]] }) }));
  const many = fc.integer({ min: 1_000, max: 3_000 }).map((n) => ({ what: `${n} headers`, request: postRequest(namespace, "timestamps", invalidBody, { extraHeaders: Array.from({ length: n }, (_, i) => [`x-h${i}`, "1"] as const) }) }));
  return fc.oneof({ arbitrary: extra, weight: 4 }, { arbitrary: malformed, weight: 4 }, { arbitrary: oversize, weight: 1 }, { arbitrary: many, weight: 1 }).map(({ what, request }): BadCase => ({ category: "headers", what, pieces: [request], expected: INVALID }));
}

const segment = fc.stringMatching(/^([A-Za-z0-9._~!$&'()*+,;=:@-]|%[0-9A-Fa-f]{2}|%[0-9A-Za-z]?){0,12}$/);
const KNOWN_NEAR_MISSES = ["/", "/v1", "/v1/", "/v1/health/", "/V1/health", "/v1/Health", "/metrics/", "/v1/metrics", "/v1/namespaces", "/v1/namespaces/", "/v1/namespaces/NS", "/v1/namespaces/NS/", "/v1/namespaces/NS/Lock", "/v1/namespaces/NS/lock/", "/v1/namespaces/NS/lock/x", "/v1//namespaces/NS/lock", "/v1/namespaces/NS/%6cock", "/v1/namespaces/NS/transactions", "/v1/namespaces/NS/transactions/", "/v2/namespaces/NS/lock", "/v1/namespaces/NS/unlock%2F", "*", "http://127.0.0.1/v1/namespaces/NS/lock", "/v1/namespaces/NS/./lock", "//v1/health", "/v1/health%00", "/v1/namespaces/NS/__proto__", "/v1/namespaces/NS/constructor", "/v1/namespaces/NS/toString", "/ui/x", "/ui/../package.json", "/UI", "/ui/index.htm", "/v1/events/", "/v1/Events"];

/**
 * Request targets: unknown paths (404 for any method), operation routes with a namespace that is
 * not valid (400 on POST), long paths, raw non-ASCII bytes in the namespace, and query strings.
 */
export function pathCases(namespace: string): fc.Arbitrary<BadCase> {
  const unknown = fc
    .tuple(fc.oneof(fc.constantFrom(...KNOWN_NEAR_MISSES).map((p) => p.replace("NS", namespace)), fc.array(segment, { minLength: 1, maxLength: 6 }).map((s) => `/${s.join("/")}`), fc.integer({ min: 1_000, max: 12_000 }).map((n) => `/${"a".repeat(n)}`)), fc.constantFrom("", "?x=1", "?", "?count=1&locks=[]"), fc.constantFrom("GET", "POST", "PUT", "DELETE"), stateChanging)
    .filter(([path, query]) => routeOf(path + query) === "unmatched")
    .map(([path, query, method, body]) => ({ what: `${method} ${path.slice(0, 100)}${query}`, request: encodeRequest({ method, target: path + query, headers: [["content-type", "application/json"]], body: Buffer.from(JSON.stringify(body.value)) }), expected: NOT_FOUND }));
  const badNamespace = fc
    .tuple(segment.filter((s) => !isValidRawNamespace(s)), stateChanging)
    .map(([ns, body]) => ({ what: `namespace ${JSON.stringify(ns)}`, request: postRequest(ns, body.op, JSON.stringify(body.value)), expected: INVALID }));
  const rawBytes = fc
    .tuple(fc.uint8Array({ minLength: 1, maxLength: 8 }).filter((b) => b.some((x) => x >= 0x80)), stateChanging)
    .map(([bytes, body]) => ({
      what: `raw namespace bytes ${Buffer.from(bytes).toString("hex")}`,
      request: encodeRequest({ method: "POST", target: Buffer.concat([Buffer.from("/v1/namespaces/"), Buffer.from(bytes.map((b) => (b === 0x20 || b === 0x2f || b === 0x3f || b < 0x20 || b === 0x7f ? 0x80 : b))), Buffer.from(`/${body.op}`)]), headers: [["content-type", "application/json"]], body: Buffer.from(JSON.stringify(body.value)) }),
      expected: INVALID,
    }));
  const query = fc.constantFrom("?count=5", "?__proto__=1", "?a=%ZZ", "?" + "q".repeat(2000)).map((q) => ({ what: `query ${q.slice(0, 40)}`, request: encodeRequest({ method: "POST", target: `/v1/namespaces/${namespace}/timestamps${q}`, headers: [["content-type", "application/json"]], body: Buffer.from('{"count":0}') }), expected: INVALID }));
  return fc.oneof({ arbitrary: unknown, weight: 5 }, { arbitrary: badNamespace, weight: 3 }, { arbitrary: rawBytes, weight: 1 }, { arbitrary: query, weight: 1 }).map(({ what, request, expected }): BadCase => ({ category: "paths", what, pieces: [request], expected }));
}

/** Methods node parses, minus those with special handling (HEAD answers no body, CONNECT tunnels). */
const KNOWN_METHODS = METHODS.filter((m) => m !== "HEAD" && m !== "CONNECT");

/** Wrong known methods on every route (405, with a state-changing body), and methods node cannot parse (400). */
export function methodCases(namespace: string): fc.Arbitrary<BadCase> {
  const onOperation = fc.tuple(fc.constantFrom(...KNOWN_METHODS.filter((m) => m !== "POST")), stateChanging).map(([method, body]) => ({ what: `${method} ${body.op}`, request: postRequest(namespace, body.op, JSON.stringify(body.value), { method }), expected: NOT_ALLOWED }));
  const onFixed = fc.tuple(fc.constantFrom(...KNOWN_METHODS.filter((m) => m !== "GET")), fc.constantFrom("/v1/health", "/metrics", "/v1/health?x", "/metrics?name[]=1")).map(([method, target]) => ({ what: `${method} ${target}`, request: encodeRequest({ method, target, headers: [["content-type", "application/json"]], body: Buffer.from("{}") }), expected: NOT_ALLOWED }));
  const unparsable = fc
    .tuple(fc.stringMatching(/^[A-Za-z_~!*-]{1,12}$/).filter((m) => !METHODS.includes(m)), stateChanging)
    .map(([method, body]) => ({ what: `method ${method}`, request: postRequest(namespace, body.op, JSON.stringify(body.value), { method }), expected: INVALID }));
  return fc.oneof(onOperation, onFixed, unparsable).map(({ what, request, expected }): BadCase => ({ category: "methods", what, pieces: [request], expected }));
}
