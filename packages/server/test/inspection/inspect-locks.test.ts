import { responseValidators, type DescriptorsPage, type ImmutableLocksPage, type NamespacesResponse, type WatchersPage } from "@leasehold/protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type RunningServer } from "../../src/start-server.js";
import { errorOf } from "../support/raw-request.js";
import { uniqueNamespace, waitFor } from "../support/wait-for.js";
import { fingerprint, get, lockToken, post } from "./inspection-fixture.js";

let server: RunningServer;
beforeAll(async () => {
  server = await startServer({ leaseMs: 30_000 });
});
afterAll(() => server.close());

const page = async (path: string): Promise<DescriptorsPage> => {
  const res = await get(server.url, path);
  expect(res.status, res.text).toBe(200);
  return responseValidators.locks.parse(res.json) as DescriptorsPage;
};

describe("GET /v1/namespaces/{namespace}/locks", () => {
  it("shows holders with fingerprint, description, held for and lease left, and waiters in queue order", async () => {
    const ns = uniqueNamespace("insp");
    const t1 = await lockToken(server.url, ns, { locks: [{ descriptor: "doc-1", mode: "exclusive" }], clientDescription: "worker A pid 1" });
    // Two waiters, in order, each with its own description and deadline.
    const w1 = post(server.url, ns, "lock", { locks: [{ descriptor: "doc-1", mode: "exclusive" }], acquireTimeoutMs: 20_000, clientDescription: "worker B" });
    await waitFor(() => server.service.snapshot(ns).waitingRequests === 1, "the first waiter");
    const w2 = post(server.url, ns, "lock", { locks: [{ descriptor: "doc-1", mode: "shared" }], acquireTimeoutMs: 5_000, clientDescription: "worker C" });
    await waitFor(() => server.service.snapshot(ns).waitingRequests === 2, "the second waiter");
    await new Promise((r) => setTimeout(r, 30));

    const res = await get(server.url, `/v1/namespaces/${ns}/locks`);
    expect(res.text).not.toContain(t1);
    const p = responseValidators.locks.parse(res.json) as DescriptorsPage;
    expect(p.view).toBe("descriptors");
    expect(p.summary).toMatchObject({ namespace: ns, heldLocks: 1, heldTokens: 1, waitingRequests: 2, immutableTimestampLocks: 0 });
    expect(p.summary.oldestHoldMs).toBeGreaterThanOrEqual(30);
    expect(p.summary.longestWaitMs).toBeGreaterThanOrEqual(30);
    expect(p.descriptors).toHaveLength(1);
    const d = p.descriptors[0]!;
    expect(d).toMatchObject({ descriptor: "doc-1", holderCount: 1, queueLength: 2, watchers: 0 });
    expect(d.holders).toEqual([
      expect.objectContaining({ mode: "exclusive", fingerprint: fingerprint(t1), clientDescription: "worker A pid 1" }),
    ]);
    expect(d.holders[0]!.heldForMs).toBeGreaterThanOrEqual(30);
    expect(d.holders[0]!.leaseLeftMs).toBeGreaterThan(25_000);
    expect(d.holders[0]!.leaseLeftMs).toBeLessThanOrEqual(30_000);
    expect(d.waiters.map((w) => [w.mode, w.clientDescription])).toEqual([
      ["exclusive", "worker B"],
      ["shared", "worker C"],
    ]);
    expect(d.waiters[0]!.waitingForMs).toBeGreaterThan(d.waiters[1]!.waitingForMs - 1);
    expect(d.waiters[0]!.deadlineLeftMs).toBeGreaterThan(15_000);
    expect(d.waiters[1]!.deadlineLeftMs).toBeLessThanOrEqual(5_000);

    await post(server.url, ns, "unlock", { tokens: [t1] });
    const granted = (await w1).json as { token: string };
    const after = await page(`/v1/namespaces/${ns}/locks`);
    expect(after.descriptors[0]!.holders[0]).toMatchObject({ fingerprint: fingerprint(granted.token), clientDescription: "worker B" });
    expect(after.descriptors[0]!.waiters.map((w) => w.clientDescription)).toEqual(["worker C"]);
    await post(server.url, ns, "unlock", { tokens: [granted.token] });
    await w2;
  });

  it("shows an all-or-none request's partial hold as acquiring, and a permit descriptor's live limit", async () => {
    const ns = uniqueNamespace("insp");
    const tb = await lockToken(server.url, ns, { locks: [{ descriptor: "b", mode: "exclusive" }] });
    await lockToken(server.url, ns, { locks: [{ descriptor: "job", mode: "permit", limit: 3 }], clientDescription: "cron" });
    const waiting = post(server.url, ns, "lock", { locks: [{ descriptor: "a", mode: "exclusive" }, { descriptor: "b", mode: "exclusive" }], acquireTimeoutMs: 10_000, clientDescription: "both" });
    await waitFor(() => server.service.snapshot(ns).waitingRequests === 1, "the waiter");
    const p = await page(`/v1/namespaces/${ns}/locks`);
    expect(p.descriptors.map((d) => d.descriptor)).toEqual(["a", "b", "job"]);
    expect(p.descriptors[0]!.holders).toEqual([expect.objectContaining({ mode: "exclusive", acquiring: true, clientDescription: "both" })]);
    expect(p.descriptors[0]!.holders[0]!.fingerprint).toBeUndefined();
    expect(p.descriptors[1]!.waiters).toEqual([expect.objectContaining({ clientDescription: "both" })]);
    expect(p.descriptors[2]).toMatchObject({ descriptor: "job", limit: 3, holderCount: 1 });
    expect(p.summary.heldLocks).toBe(3);
    await post(server.url, ns, "unlock", { tokens: [tb] });
    expect(((await waiting).json as { status: string }).status).toBe("acquired");
  });

  it("filters by prefix and by contended, and pages with a cursor in descriptor order", async () => {
    const ns = uniqueNamespace("insp");
    const names = Array.from({ length: 25 }, (_, i) => `k${String(i).padStart(2, "0")}`);
    await lockToken(server.url, ns, { locks: names.map((descriptor) => ({ descriptor, mode: "shared" })) });
    await lockToken(server.url, ns, { locks: [{ descriptor: "other", mode: "exclusive" }] });
    const waiting = post(server.url, ns, "lock", { locks: [{ descriptor: "k07", mode: "exclusive" }], acquireTimeoutMs: 300 });
    await waitFor(() => server.service.snapshot(ns).waitingRequests === 1, "the waiter");

    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const p = await page(`/v1/namespaces/${ns}/locks?prefix=k&limit=10${cursor === undefined ? "" : `&cursor=${encodeURIComponent(cursor)}`}`);
      seen.push(...p.descriptors.map((d) => d.descriptor));
      cursor = p.nextCursor;
      pages++;
    } while (cursor !== undefined);
    expect(seen).toEqual(names);
    expect(pages).toBe(3);

    const contended = await page(`/v1/namespaces/${ns}/locks?contended=true`);
    expect(contended.descriptors.map((d) => d.descriptor)).toEqual(["k07"]);
    expect(contended.descriptors[0]!.queueLength).toBe(1);
    expect((await page(`/v1/namespaces/${ns}/locks?cursor=k24`)).descriptors.map((d) => d.descriptor)).toEqual(["other"]);
    expect(((await waiting).json as { status: string }).status).toBe("timeout");
  });

  it("lists as-many-as-possible watchers in arrival order, with paging and a prefix filter", async () => {
    const ns = uniqueNamespace("insp");
    await lockToken(server.url, ns, { locks: [{ descriptor: "q1", mode: "exclusive" }, { descriptor: "q2", mode: "exclusive" }, { descriptor: "z", mode: "exclusive" }] });
    const claims = [
      post(server.url, ns, "lock", { locks: [{ descriptor: "q1", mode: "exclusive" }, { descriptor: "q2", mode: "exclusive" }], behavior: "as-many-as-possible", max: 1, acquireTimeoutMs: 2_000, clientDescription: "claimer 1" }),
    ];
    await waitFor(() => server.service.snapshot(ns).waitingRequests === 1, "claimer 1");
    claims.push(post(server.url, ns, "lock", { locks: [{ descriptor: "q2", mode: "exclusive" }], behavior: "as-many-as-possible", acquireTimeoutMs: 2_000, clientDescription: "claimer 2" }));
    await waitFor(() => server.service.snapshot(ns).waitingRequests === 2, "claimer 2");
    claims.push(post(server.url, ns, "lock", { locks: [{ descriptor: "z", mode: "exclusive" }], behavior: "as-many-as-possible", acquireTimeoutMs: 2_000, clientDescription: "claimer 3" }));
    await waitFor(() => server.service.snapshot(ns).waitingRequests === 3, "claimer 3");

    const first = responseValidators.locks.parse((await get(server.url, `/v1/namespaces/${ns}/locks?view=watchers&limit=2`)).json) as WatchersPage;
    expect(first.watchers.map((w) => [w.clientDescription, w.descriptorCount, w.firstDescriptor])).toEqual([
      ["claimer 1", 2, "q1"],
      ["claimer 2", 1, "q2"],
    ]);
    expect(first.watchers[0]!.max).toBe(1);
    expect(first.nextCursor).toBeDefined();
    const second = responseValidators.locks.parse((await get(server.url, `/v1/namespaces/${ns}/locks?view=watchers&limit=2&cursor=${first.nextCursor!}`)).json) as WatchersPage;
    expect(second.watchers.map((w) => w.clientDescription)).toEqual(["claimer 3"]);
    expect(second.nextCursor).toBeUndefined();
    const prefixed = responseValidators.locks.parse((await get(server.url, `/v1/namespaces/${ns}/locks?view=watchers&prefix=z`)).json) as WatchersPage;
    expect(prefixed.watchers.map((w) => w.clientDescription)).toEqual(["claimer 3"]);
    const desc = await page(`/v1/namespaces/${ns}/locks`);
    expect(desc.descriptors.map((d) => [d.descriptor, d.watchers])).toEqual([["q1", 1], ["q2", 2], ["z", 1]]);
    await Promise.all(claims);
  });

  it("lists immutable-timestamp locks by start timestamp, with fingerprints and paging", async () => {
    const ns = uniqueNamespace("insp");
    const started = (await post(server.url, ns, "transactions/start", { count: 5 })).json as { transactions: { startTimestamp: number; token: string }[] };
    await post(server.url, ns, "unlock", { tokens: [started.transactions[1]!.token] });
    const first = responseValidators.locks.parse((await get(server.url, `/v1/namespaces/${ns}/locks?view=immutable&limit=2`)).json) as ImmutableLocksPage;
    const live = started.transactions.filter((_, i) => i !== 1);
    expect(first.immutableTimestampLocks.map((l) => [l.startTimestamp, l.fingerprint])).toEqual(live.slice(0, 2).map((t) => [t.startTimestamp, fingerprint(t.token)]));
    expect(first.summary.immutableTimestampLocks).toBe(4);
    const rest = responseValidators.locks.parse((await get(server.url, `/v1/namespaces/${ns}/locks?view=immutable&cursor=${first.nextCursor!}`)).json) as ImmutableLocksPage;
    expect(rest.immutableTimestampLocks.map((l) => l.startTimestamp)).toEqual(live.slice(2).map((t) => t.startTimestamp));
    expect(rest.nextCursor).toBeUndefined();
  });

  it("answers an empty page for a namespace never used, without creating it", async () => {
    const ns = uniqueNamespace("never");
    const p = await page(`/v1/namespaces/${ns}/locks`);
    expect(p.descriptors).toEqual([]);
    const list = (await get(server.url, "/v1/namespaces")).json as NamespacesResponse;
    expect(list.namespaces.map((n) => n.namespace)).not.toContain(ns);
  });

  it("refuses bad query parameters with 400 naming the parameter, and changes nothing", async () => {
    const ns = uniqueNamespace("insp");
    await lockToken(server.url, ns, { locks: [{ descriptor: "x", mode: "exclusive" }] });
    const before = server.service.snapshot(ns);
    const cases: [string, string][] = [
      ["limit=0", "query.limit"],
      ["limit=1001", "query.limit"],
      ["limit=abc", "query.limit"],
      ["view=all", "query.view"],
      ["contended=yes", "query.contended"],
      ["contended=true&view=watchers", "query.contended"],
      ["prefix=", "query.prefix"],
      ["prefix=a&view=immutable", "query.prefix"],
      ["view=immutable&cursor=abc", "query.cursor"],
      ["view=watchers&cursor=-1", "query.cursor"],
      ["cursor=", "query.cursor"],
      ["bogus=1", "query.bogus"],
      ["limit=1&limit=2", "query.limit"],
    ];
    for (const [query, path] of cases) {
      const res = await get(server.url, `/v1/namespaces/${ns}/locks?${query}`);
      expect(res.status, query).toBe(400);
      const error = errorOf(res);
      expect(error.code).toBe("INVALID_ARGUMENT");
      expect(error.details.path, query).toBe(path);
      expect(error.message).toContain(path.slice("query.".length));
    }
    expect((await get(server.url, "/v1/namespaces/bad%20name/locks")).status).toBe(400);
    expect(errorOf(await get(server.url, "/v1/namespaces?limit=0")).details.path).toBe("query.limit");
    expect(errorOf(await get(server.url, "/v1/namespaces?cursor=%20x")).details.path).toBe("query.cursor");
    expect((await post(server.url, ns, "locks", {})).status).toBe(405);
    expect(server.service.snapshot(ns)).toEqual(before);
  });
});

describe("GET /v1/namespaces", () => {
  it("lists every namespace with its counts, in name order, a page at a time", async () => {
    const prefix = uniqueNamespace("list");
    const names = [`${prefix}-a`, `${prefix}-b`, `${prefix}-c`];
    await lockToken(server.url, names[0]!, { locks: [{ descriptor: "x", mode: "exclusive" }, { descriptor: "y", mode: "shared" }] });
    await post(server.url, names[1]!, "transactions/start", { count: 2 });
    await post(server.url, names[2]!, "timestamps", { count: 1 });
    const all: NamespacesResponse["namespaces"] = [];
    let cursor: string | undefined;
    do {
      const res = await get(server.url, `/v1/namespaces?limit=2${cursor === undefined ? "" : `&cursor=${cursor}`}`);
      const body = responseValidators.namespaces.parse(res.json);
      expect(body.namespaces.length).toBeLessThanOrEqual(2);
      all.push(...body.namespaces);
      cursor = body.nextCursor;
    } while (cursor !== undefined);
    const names2 = all.map((n) => n.namespace);
    expect(names2).toEqual([...names2].sort());
    const mine = all.filter((n) => n.namespace.startsWith(prefix));
    expect(mine.map((n) => [n.namespace, n.heldLocks, n.heldTokens, n.waitingRequests, n.immutableTimestampLocks])).toEqual([
      [names[0], 2, 1, 0, 0],
      [names[1], 0, 2, 0, 2],
      [names[2], 0, 0, 0, 0],
    ]);
    expect(mine[0]!.oldestHoldMs).toBeGreaterThanOrEqual(0);
    expect(mine[2]!.oldestHoldMs).toBeUndefined();
  });
});
