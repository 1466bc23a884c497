import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type RunningServer } from "../../src/start-server.js";
import { errorOf, rawRequest, type RawRequestOptions } from "../support/raw-request.js";

const NS = "bad-input";
const json = { "content-type": "application/json" };
const lockBody = (extra: Record<string, unknown> = {}): string => JSON.stringify({ locks: [{ descriptor: "d", mode: "exclusive" }], ...extra });

interface Case {
  readonly what: string;
  readonly path: string;
  readonly options: RawRequestOptions;
  readonly status: number;
  readonly code: string;
  /** Words the message must contain: what was wrong and where. */
  readonly says: readonly string[];
}

const cases: Case[] = [
  { what: "an unknown path", path: "/", options: { method: "GET" }, status: 404, code: "NOT_FOUND", says: ["no route"] },
  { what: "an unknown operation", path: `/v1/namespaces/${NS}/bogus`, options: { body: "{}", headers: json }, status: 404, code: "NOT_FOUND", says: ["bogus"] },
  { what: "a namespace without operation", path: `/v1/namespaces/${NS}`, options: { body: "{}", headers: json }, status: 404, code: "NOT_FOUND", says: [] },
  { what: "GET on an operation", path: `/v1/namespaces/${NS}/lock`, options: { method: "GET" }, status: 405, code: "METHOD_NOT_ALLOWED", says: ["POST"] },
  { what: "POST on health", path: "/v1/health", options: { method: "POST", body: "{}", headers: json }, status: 405, code: "METHOD_NOT_ALLOWED", says: ["GET"] },
  { what: "DELETE on metrics", path: "/metrics", options: { method: "DELETE" }, status: 405, code: "METHOD_NOT_ALLOWED", says: ["GET"] },
  { what: "a wrong method before a bad namespace", path: "/v1/namespaces/-x/lock", options: { method: "PUT" }, status: 405, code: "METHOD_NOT_ALLOWED", says: [] },
  { what: "a namespace starting with a dash", path: "/v1/namespaces/-x/lock", options: { body: lockBody(), headers: json }, status: 400, code: "INVALID_ARGUMENT", says: ["namespace"] },
  { what: "a namespace with a space", path: "/v1/namespaces/bad%20ns/lock", options: { body: lockBody(), headers: json }, status: 400, code: "INVALID_ARGUMENT", says: ["namespace"] },
  { what: "a namespace with broken escapes", path: "/v1/namespaces/%ZZ/lock", options: { body: lockBody(), headers: json }, status: 400, code: "INVALID_ARGUMENT", says: ["namespace"] },
  { what: "a 65-character namespace", path: `/v1/namespaces/${"n".repeat(65)}/lock`, options: { body: lockBody(), headers: json }, status: 400, code: "INVALID_ARGUMENT", says: ["namespace"] },
  { what: "a bad namespace before a bad content type", path: "/v1/namespaces/-x/lock", options: { body: "hi", headers: { "content-type": "text/plain" } }, status: 400, code: "INVALID_ARGUMENT", says: ["namespace"] },
  { what: "text/plain", path: `/v1/namespaces/${NS}/lock`, options: { body: lockBody(), headers: { "content-type": "text/plain" } }, status: 415, code: "UNSUPPORTED_MEDIA_TYPE", says: ["text/plain", "application/json"] },
  { what: "no content type", path: `/v1/namespaces/${NS}/lock`, options: { body: lockBody() }, status: 415, code: "UNSUPPORTED_MEDIA_TYPE", says: ["missing"] },
  { what: "a non-UTF-8 charset", path: `/v1/namespaces/${NS}/lock`, options: { body: lockBody(), headers: { "content-type": "application/json; charset=latin1" } }, status: 415, code: "UNSUPPORTED_MEDIA_TYPE", says: ["latin1"] },
  { what: "a bad content type before a bad body", path: `/v1/namespaces/${NS}/lock`, options: { body: "{", headers: { "content-type": "application/xml" } }, status: 415, code: "UNSUPPORTED_MEDIA_TYPE", says: [] },
  { what: "malformed JSON", path: `/v1/namespaces/${NS}/lock`, options: { body: '{"locks": [}', headers: json }, status: 400, code: "INVALID_ARGUMENT", says: ["not valid JSON", "line 1, column 12", "a value or ']'"] },
  { what: "JSON broken on a later line", path: `/v1/namespaces/${NS}/lock`, options: { body: '{\n  "locks": [\n    {"descriptor": "d",}\n  ]\n}', headers: json }, status: 400, code: "INVALID_ARGUMENT", says: ["line 3"] },
  { what: "truncated JSON", path: `/v1/namespaces/${NS}/lock`, options: { body: '{"locks": [', headers: json }, status: 400, code: "INVALID_ARGUMENT", says: ["not valid JSON"] },
  { what: "invalid UTF-8", path: `/v1/namespaces/${NS}/lock`, options: { body: Buffer.from([0x7b, 0xff, 0x7d]), headers: json }, status: 400, code: "INVALID_ARGUMENT", says: ["UTF-8"] },
  { what: "JSON nested 100,000 levels deep", path: `/v1/namespaces/${NS}/lock`, options: { body: `{"locks":[{"descriptor":"d","mode":${"[".repeat(100_000)}${"]".repeat(100_000)}}]}`, headers: json }, status: 400, code: "INVALID_ARGUMENT", says: ["levels deep"] },
  { what: "an empty lock body", path: `/v1/namespaces/${NS}/lock`, options: { body: "", headers: json }, status: 400, code: "INVALID_ARGUMENT", says: ["empty"] },
  { what: "a JSON array body", path: `/v1/namespaces/${NS}/lock`, options: { body: "[]", headers: json }, status: 400, code: "INVALID_ARGUMENT", says: ["(body)"] },
  { what: "a JSON null body", path: `/v1/namespaces/${NS}/timestamps`, options: { body: "null", headers: json }, status: 400, code: "INVALID_ARGUMENT", says: ["(body)"] },
  { what: "locks of the wrong type", path: `/v1/namespaces/${NS}/lock`, options: { body: '{"locks":"d"}', headers: json }, status: 400, code: "INVALID_ARGUMENT", says: ["locks"] },
  { what: "a string timeout", path: `/v1/namespaces/${NS}/lock`, options: { body: lockBody({ acquireTimeoutMs: "5" }), headers: json }, status: 400, code: "INVALID_ARGUMENT", says: ["acquireTimeoutMs"] },
  { what: "a fractional count", path: `/v1/namespaces/${NS}/timestamps`, options: { body: '{"count":1.5}', headers: json }, status: 400, code: "INVALID_ARGUMENT", says: ["count"] },
  { what: "a timeout over 60 s", path: `/v1/namespaces/${NS}/lock`, options: { body: lockBody({ acquireTimeoutMs: 60_001 }), headers: json }, status: 400, code: "INVALID_ARGUMENT", says: ["acquireTimeoutMs", "60000"] },
  { what: "a permit limit of 0", path: `/v1/namespaces/${NS}/lock`, options: { body: '{"locks":[{"descriptor":"p","mode":"permit","limit":0}]}', headers: json }, status: 400, code: "INVALID_ARGUMENT", says: ["locks[0].limit"] },
  { what: "a count of 0", path: `/v1/namespaces/${NS}/timestamps`, options: { body: '{"count":0}', headers: json }, status: 400, code: "INVALID_ARGUMENT", says: ["count"] },
  { what: "a count of 10,001", path: `/v1/namespaces/${NS}/timestamps`, options: { body: '{"count":10001}', headers: json }, status: 400, code: "INVALID_ARGUMENT", says: ["count"] },
  { what: "1,001 transactions", path: `/v1/namespaces/${NS}/transactions/start`, options: { body: '{"count":1001}', headers: json }, status: 400, code: "INVALID_ARGUMENT", says: ["count"] },
  { what: "an unknown field", path: `/v1/namespaces/${NS}/lock`, options: { body: lockBody({ acquireTimeout: 5 }), headers: json }, status: 400, code: "INVALID_ARGUMENT", says: ["acquireTimeout", "not a known field"] },
  { what: "an unknown field in a lock", path: `/v1/namespaces/${NS}/lock`, options: { body: '{"locks":[{"descriptor":"d","mode":"exclusive","mod":1}]}', headers: json }, status: 400, code: "INVALID_ARGUMENT", says: ["locks[0].mod"] },
  { what: "an unknown field on immutable-timestamp", path: `/v1/namespaces/${NS}/immutable-timestamp`, options: { body: '{"x":1}', headers: json }, status: 400, code: "INVALID_ARGUMENT", says: ["x"] },
  { what: "a null field", path: `/v1/namespaces/${NS}/lock`, options: { body: lockBody({ behavior: null }), headers: json }, status: 400, code: "INVALID_ARGUMENT", says: ["behavior", "null"] },
  { what: "a null token", path: `/v1/namespaces/${NS}/unlock`, options: { body: '{"tokens":[null]}', headers: json }, status: 400, code: "INVALID_ARGUMENT", says: ["tokens[0]"] },
  { what: "a missing count", path: `/v1/namespaces/${NS}/timestamps`, options: { body: "{}", headers: json }, status: 400, code: "INVALID_ARGUMENT", says: ["count", "required"] },
  { what: "duplicate descriptors", path: `/v1/namespaces/${NS}/lock`, options: { body: '{"locks":[{"descriptor":"d","mode":"shared"},{"descriptor":"d","mode":"shared"}]}', headers: json }, status: 400, code: "INVALID_ARGUMENT", says: ["locks[1].descriptor"] },
  { what: "max with all-or-none", path: `/v1/namespaces/${NS}/lock`, options: { body: lockBody({ max: 1 }), headers: json }, status: 400, code: "INVALID_ARGUMENT", says: ["max"] },
  { what: "a reused requestId with another request", path: `/v1/namespaces/${NS}/lock`, options: { body: '{"requestId":"held","locks":[{"descriptor":"other","mode":"exclusive"}]}', headers: json }, status: 409, code: "REQUEST_ID_CONFLICT", says: [] },
  { what: "a declared body over 1 MiB", path: `/v1/namespaces/${NS}/timestamps`, options: { body: `{"count":1}${" ".repeat(1024 * 1024)}`, headers: json }, status: 413, code: "PAYLOAD_TOO_LARGE", says: ["1048576"] },
  { what: "a chunked body over 1 MiB", path: `/v1/namespaces/${NS}/timestamps`, options: { chunks: ['{"count":1}', ...Array.from({ length: 20 }, () => " ".repeat(64 * 1024))], headers: json }, status: 413, code: "PAYLOAD_TOO_LARGE", says: ["1048576"] },
];

describe("HTTP: every client mistake gets its status and code, and changes nothing", () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServer();
    // A held lock, a waiter and a requestId in the table, so "changed nothing" has something to compare.
    const post = (op: string, body: string): Promise<unknown> => rawRequest(server.url, `/v1/namespaces/${NS}/${op}`, { body, headers: json });
    await post("lock", '{"requestId":"held","locks":[{"descriptor":"d","mode":"exclusive"}]}');
    void post("lock", '{"locks":[{"descriptor":"d","mode":"shared"}],"acquireTimeoutMs":60000}');
    await post("transactions/start", '{"count":1}');
    while (server.service.snapshot(NS).waitingRequests === 0) await new Promise((r) => setTimeout(r, 5));
  });
  afterAll(async () => {
    await server.close();
  });

  it.each(cases)("$what → $status $code", async ({ path, options, status, code, says }) => {
    const before = server.service.snapshot(NS);
    const metricsBefore = server.service.metrics();
    const res = await rawRequest(server.url, path, options);
    expect(res.status).toBe(status);
    expect(res.headers["content-type"]).toMatch(/^application\/json/);
    const error = errorOf(res);
    expect(error.code).toBe(code);
    expect(error.message.length).toBeGreaterThan(10);
    expect(typeof error.details).toBe("object");
    for (const words of says) expect(error.message).toContain(words);
    if (status === 405) expect(res.headers.allow).toMatch(/POST|GET/);
    if (status === 413) expect(res.headers.connection).toBe("close");
    expect(server.service.snapshot(NS)).toEqual(before);
    expect(server.service.metrics()).toEqual(metricsBefore);
    // The server is still up and serving.
    expect((await rawRequest(server.url, "/v1/health", { method: "GET" })).status).toBe(200);
  });

  it("answers 413 on a declared length before the body is sent", async () => {
    const res = await new Promise<number>((resolve, reject) => {
      import("node:http").then(({ request }) => {
        const req = request(new URL(`/v1/namespaces/${NS}/timestamps`, server.url), {
          method: "POST",
          agent: false,
          headers: { ...json, "content-length": String(50 * 1024 * 1024) },
        });
        req.on("response", (r) => {
          resolve(r.statusCode ?? 0);
          req.destroy();
        });
        req.on("error", reject);
        req.flushHeaders();
      }, reject);
    });
    expect(res).toBe(413);
  });

  it("accepts a body of exactly 1 MiB, JSON with a charset parameter, and an empty immutable-timestamp body", async () => {
    const padded = `{"count":1}${" ".repeat(1024 * 1024 - 11)}`;
    expect(Buffer.byteLength(padded)).toBe(1024 * 1024);
    const big = await rawRequest(server.url, `/v1/namespaces/${NS}/timestamps`, { body: padded, headers: json });
    expect(big.status).toBe(200);
    const charset = await rawRequest(server.url, `/v1/namespaces/${NS}/timestamps`, { body: '{"count":1}', headers: { "content-type": "Application/JSON; charset=UTF-8" } });
    expect(charset.status).toBe(200);
    const empty = await rawRequest(server.url, `/v1/namespaces/${NS}/immutable-timestamp`, { body: "", headers: json });
    expect(empty.status).toBe(200);
    const bare = await rawRequest(server.url, `/v1/namespaces/${NS}/immutable-timestamp`, {});
    expect(bare.status).toBe(200);
    expect(bare.json).toEqual({ immutableTimestamp: expect.any(Number) as number });
  });

  it("answers a request node cannot parse with a JSON 400", async () => {
    const { connect } = await import("node:net");
    const { port } = new URL(server.url);
    const text = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(port), "127.0.0.1", () => socket.write("BREW /coffee HTCPCP/1.0\r\n\r\n"));
      let received = "";
      socket.on("data", (d: Buffer) => (received += d.toString()));
      socket.on("close", () => resolve(received));
      socket.on("error", reject);
    });
    expect(text).toMatch(/^HTTP\/1.1 400/);
    expect(text).toContain('"code":"INVALID_ARGUMENT"');
  });
});
