import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type RunningServer } from "../../src/start-server.js";
import { uniqueNamespace, waitFor } from "../support/wait-for.js";
import { BatchStream, exclusive, resultOf, tokenOf } from "./support/batch-stream.js";
import { postJson } from "./support/post-json.js";

describe("lock-batch: requestId idempotency and acquireTimeoutMs per entry", () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(async () => {
    await server.close();
  });

  it("the same requestId twice in one batch acquires once: both lines carry the same token", async () => {
    const ns = uniqueNamespace("rid");
    const batch = new BatchStream(server.url, ns, { requests: [exclusive("a", { requestId: "same" }), exclusive("a", { requestId: "same" })] });
    const lines = await batch.done;
    expect(lines).toHaveLength(2);
    expect(tokenOf(lines[0]!)).toBe(tokenOf(lines[1]!));
    expect(server.service.snapshot(ns).heldTokens).toBe(1);
  });

  it("two waiting entries with one requestId share the wait and both resolve with the one grant", async () => {
    const ns = uniqueNamespace("rid");
    const blocker = await postJson(server.url, ns, "lock", exclusive("a"));
    const batch = new BatchStream(server.url, ns, {
      requests: [exclusive("a", { requestId: "w", acquireTimeoutMs: 30_000 }), exclusive("a", { requestId: "w", acquireTimeoutMs: 30_000 })],
    });
    await waitFor(() => server.service.snapshot(ns).waitingRequests === 1, "one shared wait");
    expect(server.service.snapshot(ns).descriptors[0]?.queue).toHaveLength(1);
    await postJson(server.url, ns, "unlock", { tokens: [(blocker.json as { token: string }).token] });
    const lines = await batch.done;
    expect(tokenOf(lines[0]!)).toBe(tokenOf(lines[1]!));
    expect(server.service.snapshot(ns).heldTokens).toBe(1);
  });

  it("across batches and single locks: a retry of a granted entry answers the same token; a retry of a waiting one joins it", async () => {
    const ns = uniqueNamespace("rid");
    const first = await new BatchStream(server.url, ns, { requests: [exclusive("g", { requestId: "granted" })] }).done;
    const again = await new BatchStream(server.url, ns, { requests: [exclusive("g", { requestId: "granted" })] }).done;
    expect(tokenOf(again[0]!)).toBe(tokenOf(first[0]!));
    const single = await postJson(server.url, ns, "lock", exclusive("g", { requestId: "granted" }));
    expect((single.json as { token: string }).token).toBe(tokenOf(first[0]!));

    const blocker = await postJson(server.url, ns, "lock", exclusive("w"));
    const waiting = new BatchStream(server.url, ns, { requests: [exclusive("w", { requestId: "waits", acquireTimeoutMs: 30_000 })] });
    await waitFor(() => server.service.snapshot(ns).waitingRequests === 1, "the entry to wait");
    const retry = new BatchStream(server.url, ns, { requests: [exclusive("w", { requestId: "waits", acquireTimeoutMs: 30_000 })] });
    const singleRetry = postJson(server.url, ns, "lock", exclusive("w", { requestId: "waits", acquireTimeoutMs: 30_000 }));
    await new Promise((r) => setTimeout(r, 50));
    expect(server.service.snapshot(ns).waitingRequests).toBe(1);
    await postJson(server.url, ns, "unlock", { tokens: [(blocker.json as { token: string }).token] });
    const token = tokenOf((await waiting.done)[0]!);
    expect(tokenOf((await retry.done)[0]!)).toBe(token);
    expect(((await singleRetry).json as { token: string }).token).toBe(token);
  });

  it("each entry keeps its own acquireTimeoutMs: the short one times out while the long one still waits", async () => {
    const ns = uniqueNamespace("timeout");
    const blocker = await postJson(server.url, ns, "lock", exclusive("busy"));
    const started = Date.now();
    const batch = new BatchStream(server.url, ns, {
      requests: [exclusive("busy", { acquireTimeoutMs: 30_000 }), exclusive("busy", { acquireTimeoutMs: 100 }), exclusive("busy"), exclusive("free")],
    });
    // acquireTimeoutMs 0 (the default) answers timeout at once, like a single lock.
    const now = [await batch.next(), await batch.next()];
    expect(new Map(now.map((l) => [l.index, resultOf(l).status]))).toEqual(new Map([[2, "timeout"], [3, "acquired"]]));
    const short = await batch.next();
    expect(short.index).toBe(1);
    expect(resultOf(short).status).toBe("timeout");
    expect(Date.now() - started).toBeGreaterThanOrEqual(90);
    expect(server.service.snapshot(ns).waitingRequests).toBe(1);
    await postJson(server.url, ns, "unlock", { tokens: [(blocker.json as { token: string }).token] });
    expect(resultOf(await batch.next()).status).toBe("acquired");
    await batch.done;
  });
});
