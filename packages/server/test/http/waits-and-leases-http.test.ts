import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type RunningServer } from "../../src/start-server.js";
import { rawRequest } from "../support/raw-request.js";
import { waitFor } from "../support/wait-for.js";

const json = { "content-type": "application/json" };

describe("wait-for-locks and timestamp-leases over raw HTTP", () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServer({});
  });
  afterAll(() => server.close());
  const post = (ns: string, operation: string, body: string) => rawRequest(server.url, `/v1/namespaces/${ns}/${operation}`, { body, headers: json });

  it.each([
    ["wait-for-locks", '{"locks":[{"descriptor":"d","mode":"permit"}]}', "locks[0].mode"],
    ["wait-for-locks", '{"locks":[{"descriptor":"d","mode":"shared"}],"acquireTimeoutMs":60001}', "acquireTimeoutMs"],
    ["wait-for-locks", "", "(body)"],
    ["timestamp-leases", '{"name":"n","count":null}', "count"],
    ["timestamp-leases", '{"name":"n","count":1,"ttlMs":5}', "ttlMs"],
    ["timestamp-leases/min", '{"name":7}', "name"],
  ])("%s %s: 400 INVALID_ARGUMENT naming %s, and nothing changes", async (operation, body, path) => {
    const ns = `bad-${Math.random().toString(36).slice(2, 8)}`;
    const answer = await post(ns, operation, body);
    expect(answer.status).toBe(400);
    expect(answer.json).toMatchObject({ error: { code: "INVALID_ARGUMENT", details: { path } } });
    expect((answer.json as { error: { message: string } }).error.message).toContain(path === "(body)" ? "body is empty" : path);
    expect(server.service.snapshot(ns)).toMatchObject({ descriptors: [], heldTokens: 0, waitingRequests: 0, nextTimestamp: 1 });
  });

  it("routes: GET is 405 with allow: POST; a neighbouring unknown operation is 404", async () => {
    const get = await rawRequest(server.url, "/v1/namespaces/n/timestamp-leases/min", { method: "GET" });
    expect(get.status).toBe(405);
    expect(get.headers.allow).toBe("POST");
    expect((await post("n", "timestamp-leases/max", '{"name":"n"}')).status).toBe(404);
    expect((await post("n", "wait-for-lock", '{"locks":[]}')).status).toBe(404);
  });

  it("a waiting wait whose client disconnects leaves the queue", async () => {
    const ns = "disconnect";
    const held = (await post(ns, "lock", '{"locks":[{"descriptor":"d","mode":"exclusive"}]}')).json as { status: string };
    expect(held.status).toBe("acquired");
    let destroy = (): void => undefined;
    const gone = rawRequest(server.url, `/v1/namespaces/${ns}/wait-for-locks`, {
      body: '{"locks":[{"descriptor":"d","mode":"exclusive"}],"acquireTimeoutMs":30000}',
      headers: json,
      onRequest: (req) => (destroy = () => req.destroy()),
    }).catch(() => undefined);
    await waitFor(() => server.service.snapshot(ns).waitingRequests === 1, "the wait queued");
    destroy();
    await gone;
    await waitFor(() => server.service.snapshot(ns).waitingRequests === 0, "the wait abandoned");
  });
});
