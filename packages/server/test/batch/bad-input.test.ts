import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type RunningServer } from "../../src/start-server.js";
import { errorOf, rawRequest } from "../support/raw-request.js";
import { uniqueNamespace, waitFor } from "../support/wait-for.js";
import { BatchStream, codeOf, exclusive, resultOf } from "./support/batch-stream.js";
import { postJson } from "./support/post-json.js";

describe("lock-batch: bad input in one entry is answered on that entry's line only", () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServer({ maxWaitingPerNamespace: 2 });
  });
  afterAll(async () => {
    await server.close();
  });

  it("schema errors, duplicate descriptors, null and a non-object entry fail alone; the good entries are granted", async () => {
    const ns = uniqueNamespace("bad");
    const batch = new BatchStream(server.url, ns, {
      requests: [
        exclusive("good-0"),
        { locks: [{ descriptor: "d", mode: "exclusiv" }] },
        { locks: [{ descriptor: "dup", mode: "exclusive" }, { descriptor: "dup", mode: "shared" }] },
        exclusive("good-3"),
        null,
        "lock please",
        { locks: [{ descriptor: "p", mode: "permit" }] },
        exclusive("good-7", { typo: 1 }),
        exclusive("good-8", { acquireTimeoutMs: null }),
        exclusive("good-9"),
      ],
    });
    const lines = await batch.done;
    expect(batch.status).toBe(200);
    const byIndex = new Map(lines.map((l) => [l.index, l]));
    expect(byIndex.size).toBe(10);
    for (const i of [0, 3, 9]) expect(resultOf(byIndex.get(i)!).status).toBe("acquired");
    for (const i of [1, 2, 4, 5, 6, 7, 8]) expect(codeOf(byIndex.get(i)!), `entry ${i}`).toBe("INVALID_ARGUMENT");
    const dup = byIndex.get(2)!;
    expect("error" in dup && dup.error.details.path).toBe("locks[1].descriptor");
    const bad = byIndex.get(1)!;
    expect("error" in bad && bad.error.message).toContain("locks[0].mode");
    // Only the three good entries hold anything.
    expect(server.service.snapshot(ns).descriptors.map((d) => d.descriptor)).toEqual(["good-0", "good-3", "good-9"]);
  });

  it("a requestId conflict (409 as a single lock) fails only that entry, inside one batch and against an earlier request", async () => {
    const ns = uniqueNamespace("bad");
    await postJson(server.url, ns, "lock", exclusive("held", { requestId: "r-1" }));
    const batch = new BatchStream(server.url, ns, {
      requests: [exclusive("other", { requestId: "r-1" }), exclusive("x", { requestId: "r-2" }), exclusive("y", { requestId: "r-2" }), exclusive("z")],
    });
    const lines = await batch.done;
    const byIndex = new Map(lines.map((l) => [l.index, l]));
    expect(codeOf(byIndex.get(0)!)).toBe("REQUEST_ID_CONFLICT");
    expect(resultOf(byIndex.get(1)!).status).toBe("acquired");
    expect(codeOf(byIndex.get(2)!)).toBe("REQUEST_ID_CONFLICT");
    expect(resultOf(byIndex.get(3)!).status).toBe("acquired");
  });

  it("the waiting limit (429 as a single lock) fails only the entries beyond it; entries granted at once still pass", async () => {
    const ns = uniqueNamespace("bad");
    const blocker = await postJson(server.url, ns, "lock", exclusive("busy"));
    const batch = new BatchStream(server.url, ns, {
      requests: [
        exclusive("busy", { acquireTimeoutMs: 30_000 }),
        exclusive("busy", { acquireTimeoutMs: 30_000 }),
        exclusive("busy", { acquireTimeoutMs: 30_000 }),
        exclusive("free"),
      ],
    });
    const limited = await batch.line(2);
    expect(codeOf(limited)).toBe("TOO_MANY_REQUESTS");
    expect("error" in limited && limited.error.details).toEqual({ limit: "maxWaitingPerNamespace", value: 2 });
    expect(resultOf(await batch.line(3)).status).toBe("acquired");
    expect(server.service.snapshot(ns).waitingRequests).toBe(2);
    await postJson(server.url, ns, "unlock", { tokens: [(blocker.json as { token: string }).token] });
    const first = await batch.line(0);
    expect(resultOf(first).status).toBe("acquired");
    await postJson(server.url, ns, "unlock", { tokens: ["result" in first && first.result.status === "acquired" ? first.result.token : ""] });
    await batch.done;
    await waitFor(() => server.service.snapshot(ns).waitingRequests === 0, "no waiter left");
  });
});

describe("lock-batch: a malformed batch as a whole gets the protocol's ordinary 400, and nothing runs", () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(async () => {
    await server.close();
  });

  const cases: [string, string, string][] = [
    ["not JSON", "{ requests: [", "(body)"],
    ["not an object", JSON.stringify([exclusive("a")]), "(body)"],
    ["null", "null", "(body)"],
    ["requests missing", JSON.stringify({}), "requests"],
    ["requests not an array", JSON.stringify({ requests: exclusive("a") }), "requests"],
    ["requests empty", JSON.stringify({ requests: [] }), "requests"],
    ["over 1,000 entries", JSON.stringify({ requests: Array.from({ length: 1001 }, (_, i) => exclusive(`d${i}`)) }), "requests"],
    ["an unknown top-level field", JSON.stringify({ requests: [exclusive("a")], acquireTimeoutMs: 5 }), "acquireTimeoutMs"],
    ["requests null", JSON.stringify({ requests: null }), "requests"],
  ];
  for (const [what, body, path] of cases) {
    it(`${what}: 400 INVALID_ARGUMENT as JSON, no entry runs`, async () => {
      const ns = uniqueNamespace("whole");
      const batch = new BatchStream(server.url, ns, undefined, body);
      await batch.done;
      expect(batch.status).toBe(400);
      expect(batch.headers["content-type"]).toBe("application/json; charset=utf-8");
      const error = (batch.errorBody as { error: { code: string; details: { path?: string } } }).error;
      expect(error.code).toBe("INVALID_ARGUMENT");
      if (what !== "not JSON") expect(error.details.path).toBe(path);
      const snapshot = server.service.snapshot(ns);
      expect(snapshot.descriptors).toEqual([]);
      expect(snapshot.heldTokens).toBe(0);
    });
  }

  it("exactly 1,000 entries is accepted", async () => {
    const ns = uniqueNamespace("whole");
    const batch = new BatchStream(server.url, ns, { requests: Array.from({ length: 1000 }, (_, i) => exclusive(`d${i}`)) });
    const lines = await batch.done;
    expect(batch.status).toBe(200);
    expect(new Set(lines.map((l) => l.index)).size).toBe(1000);
  });

  it("the ordinary transport checks come first: bad namespace 400, wrong content type 415, GET 405", async () => {
    const body = JSON.stringify({ requests: [exclusive("a")] });
    const badNs = await rawRequest(server.url, "/v1/namespaces/-bad/lock-batch", { body, headers: { "content-type": "application/json" } });
    expect(badNs.status).toBe(400);
    expect(errorOf(badNs).details.path).toBe("namespace");
    const text = await rawRequest(server.url, "/v1/namespaces/ns/lock-batch", { body, headers: { "content-type": "text/plain" } });
    expect(text.status).toBe(415);
    const get = await rawRequest(server.url, "/v1/namespaces/ns/lock-batch", { method: "GET" });
    expect(get.status).toBe(405);
    const cancelGet = await rawRequest(server.url, "/v1/namespaces/ns/lock-cancel", { method: "GET" });
    expect(cancelGet.status).toBe(405);
  });

  it("lock-cancel validates its body: 400 for a missing or bad requestId", async () => {
    for (const body of [{}, { requestId: "" }, { requestId: 7 }, { requestId: "a", extra: 1 }]) {
      const answer = await postJson(server.url, "ns", "lock-cancel", body);
      expect(answer.status, JSON.stringify(body)).toBe(400);
      expect(errorOf(answer).code).toBe("INVALID_ARGUMENT");
    }
  });
});
