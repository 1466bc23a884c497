import { responseValidators, type DescriptorsPage, type NamespacesResponse } from "@leasehold/protocol";
import { describe, expect, it } from "vitest";
import { errorOf } from "../support/raw-request.js";
import { uniqueNamespace, waitFor } from "../support/wait-for.js";
import { capturingLogger, fingerprint, get, lockToken, post, revoke, serversClosedAfterEach } from "./inspection-fixture.js";

const ADMIN = "admin-token-0123456789abcdef";
const OPS = "ops-token-0123456789abcdef";
const BILLING = "billing-token-0123456789ab";

const start = serversClosedAfterEach({ leaseMs: 30_000 });

describe("POST /v1/namespaces/{namespace}/revoke", () => {
  it("by fingerprint: releases the holder whole, grants the waiter at once, answers and logs what and why", async () => {
    const lines: Record<string, unknown>[] = [];
    const server = await start({ allowAdminWithoutAuth: true, logger: capturingLogger(lines, "info") });
    const ns = uniqueNamespace("rv");
    const stuck = await lockToken(server.url, ns, { locks: [{ descriptor: "inv-1", mode: "exclusive" }, { descriptor: "inv-2", mode: "exclusive" }], clientDescription: "wedged worker" });
    const waiter = post(server.url, ns, "lock", { locks: [{ descriptor: "inv-2", mode: "exclusive" }], acquireTimeoutMs: 20_000, clientDescription: "next worker" });
    await waitFor(() => server.service.snapshot(ns).waitingRequests === 1, "the waiter");

    const started = Date.now();
    const res = await revoke(server.url, ns, { fingerprints: [fingerprint(stuck), "0000000000000000"], reason: "INC-42 wedged" });
    expect(res.status, res.text).toBe(200);
    expect(res.text).not.toContain(stuck);
    const answer = responseValidators.revoke.parse(res.json);
    expect(answer.revoked).toEqual([
      expect.objectContaining({ fingerprint: fingerprint(stuck), clientDescription: "wedged worker", descriptors: ["inv-1", "inv-2"] }),
    ]);
    expect(answer.notFound).toEqual(["0000000000000000"]);
    const granted = await waiter;
    expect((granted.json as { status: string }).status).toBe("acquired");
    expect(Date.now() - started).toBeLessThan(5_000);
    // The revoked holder learns at its next refresh, as after a lapse.
    expect(((await post(server.url, ns, "refresh", { tokens: [stuck] })).json as { refreshed: string[] }).refreshed).toEqual([]);

    const warn = lines.find((l) => l.msg === "revoked by an admin: released these holders");
    expect(warn).toMatchObject({ level: 40, namespace: ns, reason: "INC-42 wedged", released: 1, notFound: 1, by: "fingerprints" });
    expect(warn!.holders).toEqual([expect.objectContaining({ fingerprint: fingerprint(stuck), clientDescription: "wedged worker", descriptors: 2, firstDescriptor: "inv-1" })]);
    expect(typeof warn!.client).toBe("string");
    expect(JSON.stringify(lines)).not.toContain(stuck);
  });

  it("by descriptor: releases every holder of it, ends an all-or-none request holding it (timeout), grants the queue", async () => {
    const server = await start({ allowAdminWithoutAuth: true });
    const ns = uniqueNamespace("rv");
    const r1 = await lockToken(server.url, ns, { locks: [{ descriptor: "doc", mode: "shared" }], clientDescription: "reader 1" });
    const r2 = await lockToken(server.url, ns, { locks: [{ descriptor: "doc", mode: "shared" }, { descriptor: "zz", mode: "exclusive" }], clientDescription: "reader 2" });
    const other = await lockToken(server.url, ns, { locks: [{ descriptor: "elsewhere", mode: "exclusive" }] });
    // Holds "a", waits on "elsewhere": an acquiring holder of "a".
    const acquiring = post(server.url, ns, "lock", { locks: [{ descriptor: "a", mode: "exclusive" }, { descriptor: "elsewhere", mode: "exclusive" }], acquireTimeoutMs: 20_000, clientDescription: "half way" });
    await waitFor(() => server.service.snapshot(ns).waitingRequests === 1, "the acquiring request");
    const writer = post(server.url, ns, "lock", { locks: [{ descriptor: "doc", mode: "exclusive" }], acquireTimeoutMs: 20_000, clientDescription: "writer" });
    await waitFor(() => server.service.snapshot(ns).waitingRequests === 2, "the writer");

    const res = await revoke(server.url, ns, { descriptors: ["doc", "a", "nobody-holds-this"] });
    expect(res.status, res.text).toBe(200);
    const answer = responseValidators.revoke.parse(res.json);
    expect(answer.revoked.map((h) => [h.clientDescription, h.fingerprint, h.acquiring, h.descriptors])).toEqual([
      ["half way", undefined, true, ["a"]],
      ["reader 1", fingerprint(r1), undefined, ["doc"]],
      ["reader 2", fingerprint(r2), undefined, ["doc", "zz"]],
    ]);
    expect(answer.notFound).toEqual(["nobody-holds-this"]);
    expect(((await acquiring).json as { status: string }).status).toBe("timeout");
    expect(((await writer).json as { status: string }).status).toBe("acquired");
    const snap = server.service.snapshot(ns);
    expect(snap.descriptors.map((d) => d.descriptor)).toEqual(["doc", "elsewhere"]);
    expect(snap.waitingRequests).toBe(0);
    await post(server.url, ns, "unlock", { tokens: [other] });
  });

  it("revokes an immutable-timestamp lock by fingerprint, moving the immutable timestamp", async () => {
    const server = await start({ allowAdminWithoutAuth: true });
    const ns = uniqueNamespace("rv");
    const { transactions } = (await post(server.url, ns, "transactions/start", { count: 2 })).json as { transactions: { startTimestamp: number; token: string }[] };
    const res = await revoke(server.url, ns, { fingerprints: [fingerprint(transactions[0]!.token)] });
    expect(responseValidators.revoke.parse(res.json).revoked).toEqual([
      expect.objectContaining({ fingerprint: fingerprint(transactions[0]!.token), startTimestamp: transactions[0]!.startTimestamp, descriptors: [] }),
    ]);
    expect(((await post(server.url, ns, "immutable-timestamp", {})).json as { immutableTimestamp: number }).immutableTimestamp).toBe(transactions[1]!.startTimestamp);
  });

  it("without authentication is refused with 403 unless --allow-admin-without-auth, and changes nothing", async () => {
    const server = await start({});
    const ns = uniqueNamespace("rv");
    const token = await lockToken(server.url, ns, { locks: [{ descriptor: "x", mode: "exclusive" }] });
    const before = server.service.snapshot(ns);
    const res = await revoke(server.url, ns, { fingerprints: [fingerprint(token)] });
    expect(res.status).toBe(403);
    expect(errorOf(res).code).toBe("PERMISSION_DENIED");
    expect(errorOf(res).message).toContain("--allow-admin-without-auth");
    expect(server.service.snapshot(ns)).toEqual(before);
    // Inspection stays open like every other route without authentication.
    expect((await get(server.url, `/v1/namespaces/${ns}/locks`)).status).toBe(200);
  });

  it("with authentication: 401 without a valid token, 403 for a non-admin token, 200 for an @admin token", async () => {
    const server = await start({ auth: { "@admin": [ADMIN], "*": [OPS], billing: [BILLING] } });
    const token = await lockToken(server.url, "billing", { locks: [{ descriptor: "x", mode: "exclusive" }] }, BILLING);
    const body = { fingerprints: [fingerprint(token)] };
    const before = server.service.snapshot("billing");
    expect((await revoke(server.url, "billing", body)).status).toBe(401);
    expect((await revoke(server.url, "billing", body, "wrong-token-0123456789abc")).status).toBe(401);
    for (const nonAdmin of [BILLING, OPS]) {
      const res = await revoke(server.url, "billing", body, nonAdmin);
      expect(res.status).toBe(403);
      expect(errorOf(res).code).toBe("PERMISSION_DENIED");
      expect(errorOf(res).message).toContain("@admin");
    }
    expect(server.service.snapshot("billing")).toEqual(before);
    const ok = await revoke(server.url, "billing", body, ADMIN);
    expect(ok.status, ok.text).toBe(200);
    expect(responseValidators.revoke.parse(ok.json).revoked).toHaveLength(1);
    // An admin token is valid everywhere, for operations too.
    expect((await post(server.url, "orders", "timestamps", { count: 1 }, ADMIN)).status).toBe(200);
  });

  it("refuses bad bodies with 400 naming the field, and changes nothing", async () => {
    const server = await start({ allowAdminWithoutAuth: true });
    const ns = uniqueNamespace("rv");
    const token = await lockToken(server.url, ns, { locks: [{ descriptor: "x", mode: "exclusive" }] });
    const before = server.service.snapshot(ns);
    const cases: [unknown, string][] = [
      [{}, "fingerprints"],
      [{ fingerprints: [fingerprint(token)], descriptors: ["x"] }, "descriptors"],
      [{ fingerprints: [] }, "fingerprints"],
      [{ fingerprints: [token] }, "fingerprints[0]"],
      [{ fingerprints: ["ABCDEF0123456789"] }, "fingerprints[0]"],
      [{ descriptors: [""] }, "descriptors[0]"],
      [{ descriptors: ["\ud800"] }, "descriptors[0]"],
      [{ descriptors: ["x"], reason: 7 }, "reason"],
      [{ descriptors: ["x"], extra: 1 }, "extra"],
      [{ descriptors: null }, "descriptors"],
      ["[1,2", "(body)"],
    ];
    for (const [body, path] of cases) {
      const res = await revoke(server.url, ns, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(errorOf(res).details.path, JSON.stringify(body)).toBe(path);
    }
    expect(errorOf(await revoke(server.url, ns, { fingerprints: [token] })).message).not.toContain(token);
    expect((await revoke(server.url, "bad name", { descriptors: ["x"] })).status).toBe(400);
    expect((await get(server.url, `/v1/namespaces/${ns}/revoke`)).status).toBe(405);
    expect(server.service.snapshot(ns)).toEqual(before);
  });
});

describe("who may inspect", () => {
  it("a namespace's token may inspect that namespace only, and GET /v1/namespaces lists only what it may see", async () => {
    const server = await start({ auth: { "@admin": [ADMIN], billing: [BILLING] } });
    await lockToken(server.url, "billing", { locks: [{ descriptor: "x", mode: "exclusive" }] }, BILLING);
    await lockToken(server.url, "orders", { locks: [{ descriptor: "y", mode: "exclusive" }] }, ADMIN);
    expect((await get(server.url, "/v1/namespaces/billing/locks", BILLING)).status).toBe(200);
    expect(((await get(server.url, "/v1/namespaces/billing/locks", BILLING)).json as DescriptorsPage).descriptors).toHaveLength(1);
    expect((await get(server.url, "/v1/namespaces/orders/locks", BILLING)).status).toBe(401);
    expect((await get(server.url, "/v1/namespaces/billing/locks")).status).toBe(401);
    expect((await get(server.url, "/v1/namespaces")).status).toBe(401);
    const mine = (await get(server.url, "/v1/namespaces", BILLING)).json as NamespacesResponse;
    expect(mine.namespaces.map((n) => n.namespace)).toEqual(["billing"]);
    // An empty namespace segment is a namespace no token is valid for: 401 before any 400.
    expect((await post(server.url, "", "unlock", "{not json", BILLING)).status).toBe(401);
    expect((await get(server.url, "/v1/namespaces//locks", BILLING)).status).toBe(401);
    const all = (await get(server.url, "/v1/namespaces", ADMIN)).json as NamespacesResponse;
    expect(all.namespaces.map((n) => n.namespace)).toEqual(["billing", "orders"]);
  });
});
