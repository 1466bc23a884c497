import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseAuthTable } from "../../src/http/auth-table.js";
import { createBearerAuth } from "../../src/http/bearer-auth.js";
import { AUTH_TOKENS_ENV, loadAuthTable } from "../../src/http/load-auth-table.js";
import { startServer, type RunningServer } from "../../src/start-server.js";
import { rawRequest, type RawResponse } from "../support/raw-request.js";
import { waitFor } from "../support/wait-for.js";
import { errorOf, jsonHeaders, lockBody, post, tokenOf } from "./security-fixture.js";

const ADMIN = "admin-token-0123456789";
const BILLING = "billing-token-0123456789";
const OTHER = "other-token-0123456789ab";

describe("auth table parsing and loading", () => {
  it("parses a namespace → tokens table and refuses every malformed one without quoting a token", () => {
    expect(parseAuthTable(JSON.stringify({ "*": [ADMIN], billing: [BILLING] }), "t")).toEqual({ "*": [ADMIN], billing: [BILLING] });
    for (const bad of ["nope", "[]", '{"billing": []}', '{"billing": "x"}', '{"billing": ["short"]}', '{"bad namespace!": ["' + ADMIN + '"]}', '{"b": ["has space 0123456789"]}']) {
      expect(() => parseAuthTable(bad, "src")).toThrow(/^src: /);
    }
    try {
      parseAuthTable(JSON.stringify({ billing: [ADMIN, 7] }), "src");
    } catch (err) {
      expect(String(err)).not.toContain(ADMIN);
    }
  });

  it("loads from --auth-file first, else from LEASEHOLD_AUTH_TOKENS, else none", () => {
    const dir = mkdtempSync(join(tmpdir(), "leasehold-auth-"));
    try {
      const file = join(dir, "auth.json");
      writeFileSync(file, JSON.stringify({ billing: [BILLING] }));
      const env = { [AUTH_TOKENS_ENV]: JSON.stringify({ "*": [ADMIN] }) };
      expect(loadAuthTable({ file, env })).toEqual({ billing: [BILLING] });
      expect(loadAuthTable({ env })).toEqual({ "*": [ADMIN] });
      expect(loadAuthTable({ env: {} })).toBeUndefined();
      expect(() => loadAuthTable({ file: join(dir, "missing.json"), env })).toThrow(/--auth-file/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("accepts exactly the tokens of the namespace or of *, with the Bearer scheme", () => {
    const auth = createBearerAuth({ "*": [ADMIN], billing: [BILLING] });
    expect(auth.allows(`Bearer ${BILLING}`, "billing")).toBe(true);
    expect(auth.allows(`bearer ${ADMIN}`, "billing")).toBe(true);
    expect(auth.allows(`Bearer ${ADMIN}`, null)).toBe(true);
    expect(auth.allows(`Bearer ${BILLING}`, null)).toBe(false);
    expect(auth.allows(`Bearer ${BILLING}`, "orders")).toBe(false);
    expect(auth.allows(`Bearer ${BILLING}x`, "billing")).toBe(false);
    expect(auth.allows(`Bearer ${BILLING.slice(0, -1)}`, "billing")).toBe(false);
    expect(auth.allows(BILLING, "billing")).toBe(false);
    expect(auth.allows(`Basic ${BILLING}`, "billing")).toBe(false);
    expect(auth.allows(undefined, "billing")).toBe(false);
    expect(auth.allows("Bearer ", "billing")).toBe(false);
  });
});

describe("HTTP with authentication configured", () => {
  let server: RunningServer;

  beforeAll(async () => {
    server = await startServer({ auth: { "*": [ADMIN], billing: [BILLING], orders: [OTHER] } });
  });
  afterAll(() => server.close());

  /** Everything a refused client sees, minus what changes per connection. */
  const visible = (res: RawResponse) => ({
    status: res.status,
    body: res.text,
    wwwAuthenticate: res.headers["www-authenticate"],
    contentType: res.headers["content-type"],
  });

  it("serves a valid token for its namespace and a * token anywhere", async () => {
    expect(tokenOf(await post(server.url, "billing", "lock", lockBody("a"), BILLING))).toBeTruthy();
    expect(tokenOf(await post(server.url, "anything", "lock", lockBody("a"), ADMIN))).toBeTruthy();
  });

  it("answers one identical 401 whatever the namespace holds, and before the body or namespace is checked", async () => {
    // billing has a held lock and a waiter; "empty-ns" was never used.
    const held = tokenOf(await post(server.url, "billing", "lock", lockBody("held"), BILLING));
    const waiting = post(server.url, "billing", "lock", lockBody("held", 2_000), BILLING);
    await waitFor(() => server.service.snapshot("billing").waitingRequests === 1, "the waiter to queue");
    const before = server.service.snapshot("billing");
    const probes: RawResponse[] = [];
    for (const ns of ["billing", "empty-ns", "orders", "bad%20namespace!", "%ff"]) {
      for (const token of [undefined, OTHER, BILLING.toUpperCase(), "x"]) {
        if (ns === "orders" && token === OTHER) continue; // that one is valid
        probes.push(await post(server.url, ns, "lock", lockBody("held"), token));
        probes.push(await post(server.url, ns, "unlock", { tokens: [held] }, token));
        probes.push(await post(server.url, ns, "lock", "{not json", token));
        probes.push(await post(server.url, ns, "refresh", { tokens: [held], bogus: 1 }, token));
        probes.push(await rawRequest(server.url, `/v1/namespaces/${ns}/lock`, { body: "<x/>", headers: { "content-type": "text/xml", ...(token ? { authorization: `Bearer ${token}` } : {}) } }));
        probes.push(await rawRequest(server.url, `/v1/namespaces/${ns}/timestamps`, { method: "GET" }));
      }
    }
    const first = visible(probes[0] as RawResponse);
    expect(first.status).toBe(401);
    expect(first.wwwAuthenticate).toMatch(/^Bearer/);
    expect(errorOf(probes[0] as RawResponse).code).toBe("UNAUTHENTICATED");
    for (const probe of probes) expect(visible(probe)).toEqual(first);
    expect(first.body).not.toContain("billing");
    // Nothing was unlocked, queued or created by any refused request.
    expect(server.service.snapshot("billing")).toEqual(before);
    expect(server.service.snapshot("empty-ns").nextTimestamp).toBe(1);
    await post(server.url, "billing", "unlock", { tokens: [held] }, BILLING);
    expect((await waiting).status).toBe(200);
  });

  it("keeps /v1/health open and requires a * token for /metrics", async () => {
    expect((await rawRequest(server.url, "/v1/health", { method: "GET" })).status).toBe(200);
    const anonymous = await rawRequest(server.url, "/metrics", { method: "GET" });
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers["www-authenticate"]).toMatch(/^Bearer/);
    expect((await rawRequest(server.url, "/metrics", { method: "GET", headers: { authorization: `Bearer ${BILLING}` } })).status).toBe(401);
    const scraped = await rawRequest(server.url, "/metrics", { method: "GET", headers: { authorization: `Bearer ${ADMIN}` } });
    expect(scraped.status).toBe(200);
    expect(scraped.text).toContain('status="401"');
  });

  it("still answers 404 for unknown paths, which name no namespace", async () => {
    expect((await rawRequest(server.url, "/nowhere", { method: "GET" })).status).toBe(404);
  });

  it("refuses a token of one namespace on another even when it is valid somewhere", async () => {
    const res = await rawRequest(server.url, "/v1/namespaces/orders/timestamps", { body: '{"count":1}', headers: jsonHeaders(BILLING) });
    expect(res.status).toBe(401);
  });
});

describe("HTTP without authentication", () => {
  it("serves requests with or without an authorization header", async () => {
    const server = await startServer();
    try {
      expect(tokenOf(await post(server.url, "ns", "lock", lockBody("a")))).toBeTruthy();
      expect(tokenOf(await post(server.url, "ns", "lock", lockBody("b"), "whatever-0123456789"))).toBeTruthy();
      expect((await rawRequest(server.url, "/metrics", { method: "GET" })).status).toBe(200);
    } finally {
      await server.close();
    }
  });
});
