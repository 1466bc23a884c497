import { responseValidators } from "@leasehold/protocol";
import { describe, expect, it } from "vitest";
import type { ActivityPage } from "../../src/service/activity-feed.js";
import { fingerprint, get, lockToken, post, revoke, serversClosedAfterEach } from "../inspection/inspection-fixture.js";
import { errorOf, rawRequest } from "../support/raw-request.js";
import { uniqueNamespace, waitFor } from "../support/wait-for.js";

const ADMIN = "admin-token-0123456789abcdef";
const BILLING = "billing-token-0123456789ab";

const start = serversClosedAfterEach({ leaseMs: 30_000 });

type EventsAnswer = ActivityPage & { canRevoke: boolean };

describe("GET /ui", () => {
  it("serves the page and its files from the package, with a strict content security policy and no credential needed", async () => {
    const server = await start({ auth: { "@admin": [ADMIN] } });
    const html = await get(server.url, "/ui");
    expect(html.status).toBe(200);
    expect(html.headers["content-type"]).toBe("text/html; charset=utf-8");
    expect(html.headers["content-security-policy"]).toContain("default-src 'none'");
    expect(html.headers["content-security-policy"]).toContain("connect-src 'self'");
    expect(html.headers["x-content-type-options"]).toBe("nosniff");
    // Everything the page loads comes from this server: no CDN, nothing fetched elsewhere.
    const refs = [...html.text.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    expect(refs.length).toBeGreaterThan(0);
    for (const ref of refs.filter((r) => !r.startsWith("#"))) {
      expect(ref).toMatch(/^\/ui\//);
      const file = await get(server.url, ref);
      expect(file.status, ref).toBe(200);
    }
    const script = await get(server.url, "/ui/status-page.js");
    expect(script.headers["content-type"]).toBe("text/javascript; charset=utf-8");
    expect(script.text).not.toMatch(/https?:\/\//);
    expect((await get(server.url, "/ui/")).text).toBe(html.text);
  });

  it("answers 404 for a file that is not part of the page, and 405 for POST", async () => {
    const server = await start({});
    for (const path of ["/ui/../package.json", "/ui/nope.js", "/ui/%2e%2e/package.json", "/ui/status-page.js/x"]) {
      const res = await get(server.url, path);
      expect(res.status, path).toBe(404);
      expect(errorOf(res).code).toBe("NOT_FOUND");
    }
    const wrongMethod = await post(server.url, "x", "lock", {}).then(() => rawRequest(server.url, "/ui", { method: "POST" }));
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.allow).toBe("GET, HEAD");
    expect((await get(server.url, "/ui")).status).toBe(200);
  });
});

describe("GET /v1/events", () => {
  it("lists lapses and revocations with fingerprints and descriptions (never a token), after a sequence number", async () => {
    const server = await start({ leaseMs: 300, allowAdminWithoutAuth: true });
    const ns = uniqueNamespace("ev");
    const lapsing = await lockToken(server.url, ns, { locks: [{ descriptor: "job-1", mode: "exclusive" }], clientDescription: "dies quietly" });
    const first = (await get(server.url, "/v1/events")).json as EventsAnswer;
    expect(first.canRevoke).toBe(true);
    await waitFor(() => server.service.snapshot(ns).heldTokens === 0, "the lapse", 5_000);
    const stuck = await lockToken(server.url, ns, { locks: [{ descriptor: "inv-1", mode: "exclusive" }, { descriptor: "inv-0", mode: "exclusive" }], clientDescription: "wedged" });
    expect((await revoke(server.url, ns, { fingerprints: [fingerprint(stuck)], reason: "INC-7" })).status).toBe(200);

    const res = await get(server.url, `/v1/events?after=${first.nextSeq}`);
    expect(res.status).toBe(200);
    expect(res.text).not.toContain(lapsing);
    expect(res.text).not.toContain(stuck);
    const page = res.json as EventsAnswer;
    const mine = page.events.filter((e) => e.namespace === ns);
    expect(mine).toEqual([
      expect.objectContaining({ kind: "lapse", fingerprint: fingerprint(lapsing), clientDescription: "dies quietly", descriptors: 1, firstDescriptor: "job-1" }),
      expect.objectContaining({
        kind: "revoke",
        reason: "INC-7",
        released: 1,
        holders: [expect.objectContaining({ fingerprint: fingerprint(stuck), clientDescription: "wedged", descriptors: 2, firstDescriptor: "inv-0" })],
      }),
    ]);
    expect(mine[1]!.seq).toBeGreaterThan(mine[0]!.seq);
    expect(page.nextSeq).toBe(mine[1]!.seq);
    // What the server sends is what the protocol package's events schema (schemas/, openapi.json) states.
    expect(responseValidators.events.check(page), JSON.stringify(page)).toBe(true);
    // Nothing new after the last one.
    expect(((await get(server.url, `/v1/events?after=${page.nextSeq}`)).json as EventsAnswer).events).toEqual([]);
  });

  it("counts grants per second and the waits of queued requests", async () => {
    const server = await start({});
    const ns = uniqueNamespace("ev");
    await get(server.url, "/v1/events"); // the first reader starts the per-second sampling
    const holder = await lockToken(server.url, ns, { locks: [{ descriptor: "d", mode: "exclusive" }] });
    const waiter = post(server.url, ns, "lock", { locks: [{ descriptor: "d", mode: "exclusive" }], acquireTimeoutMs: 10_000 });
    await waitFor(() => server.service.snapshot(ns).waitingRequests === 1, "the waiter");
    await new Promise((r) => setTimeout(r, 200));
    await post(server.url, ns, "unlock", { tokens: [holder] });
    expect((await waiter).status).toBe(200);
    let seconds: ActivityPage["seconds"] = [];
    // The second holding both grants has to end before it is reported.
    for (let i = 0; i < 40; i++) {
      seconds = ((await get(server.url, "/v1/events")).json as EventsAnswer).seconds ?? [];
      if (seconds.some((s) => s.waits !== undefined)) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(seconds.reduce((n, s) => n + s.grants, 0)).toBe(2);
    const waited = seconds.find((s) => s.waits !== undefined)!;
    expect(waited.waits!.count).toBe(1);
    expect(waited.waits!.maxMs).toBeGreaterThanOrEqual(200);
    expect(responseValidators.events.check({ events: [], nextSeq: 0, seconds, canRevoke: false }), JSON.stringify(seconds)).toBe(true);
  });

  it("with authentication: a namespace token sees only its namespace's events and no global history, and may not revoke", async () => {
    const server = await start({ leaseMs: 300, auth: { "@admin": [ADMIN], billing: [BILLING] } });
    await lockToken(server.url, "billing", { locks: [{ descriptor: "b", mode: "exclusive" }] }, BILLING);
    await lockToken(server.url, "other", { locks: [{ descriptor: "o", mode: "exclusive" }] }, ADMIN);
    await waitFor(() => server.service.snapshot("billing").heldTokens === 0 && server.service.snapshot("other").heldTokens === 0, "both lapses", 5_000);
    expect((await get(server.url, "/v1/events")).status).toBe(401);
    const scoped = (await get(server.url, "/v1/events", BILLING)).json as EventsAnswer;
    expect(scoped.events.map((e) => e.namespace)).toEqual(["billing"]);
    expect(scoped.seconds).toBeUndefined();
    expect(scoped.canRevoke).toBe(false);
    const admin = (await get(server.url, "/v1/events", ADMIN)).json as EventsAnswer;
    expect(admin.events.map((e) => e.namespace).sort()).toEqual(["billing", "other"]);
    expect(admin.seconds).toBeDefined();
    expect(admin.canRevoke).toBe(true);
  });

  it("refuses unknown, repeated and malformed parameters with 400 naming the parameter", async () => {
    const server = await start({});
    for (const [query, path] of [
      ["?after=x", "query.after"],
      ["?after=1&after=2", "query.after"],
      ["?since=1", "query.since"],
      ["?after=-1", "query.after"],
    ] as const) {
      const res = await get(server.url, `/v1/events${query}`);
      expect(res.status, query).toBe(400);
      expect(errorOf(res).details.path, query).toBe(path);
    }
    expect((await get(server.url, "/v1/events?after=0")).status).toBe(200);
  });
});
