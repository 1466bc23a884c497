import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type RunningServer } from "../../src/start-server.js";
import { sleep, uniqueNamespace, waitFor } from "../support/wait-for.js";
import { BatchStream, exclusive, tokenOf } from "./support/batch-stream.js";
import { postJson } from "./support/post-json.js";

describe("lock-batch: a disconnect abandons every unresolved entry", () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(async () => {
    await server.close();
  });

  it("every waiting entry leaves its queue, what it had acquired is released, and no ghost remains", async () => {
    const ns = uniqueNamespace("gone");
    const blocker = await postJson(server.url, ns, "lock", exclusive("z"));
    const abandonedBefore = server.service.metrics().abandonedTotal;
    const batch = new BatchStream(server.url, ns, {
      requests: [
        // Acquires "a" (it sorts first), then waits on "z".
        { locks: [{ descriptor: "a", mode: "exclusive" }, { descriptor: "z", mode: "exclusive" }], acquireTimeoutMs: 30_000 },
        exclusive("z", { acquireTimeoutMs: 30_000 }),
        { locks: [{ descriptor: "z", mode: "shared" }], acquireTimeoutMs: 30_000, requestId: "kept-id" },
        exclusive("granted-with-id", { requestId: "delivered" }),
      ],
    });
    const granted = await batch.next();
    expect(granted.index).toBe(3);
    await waitFor(() => server.service.snapshot(ns).waitingRequests === 3, "three entries to wait");
    // A single lock queued behind the batch must move up once the batch is gone.
    const next = postJson(server.url, ns, "lock", exclusive("a", { acquireTimeoutMs: 30_000 }));
    await waitFor(() => server.service.snapshot(ns).waitingRequests === 4, "the single lock to queue behind entry 0");

    batch.req.destroy();
    // The three entries leave; the single lock then takes "a", which entry 0 had acquired.
    await waitFor(() => server.service.snapshot(ns).waitingRequests === 0, "the batch's entries to leave");
    expect(server.service.metrics().abandonedTotal).toBe(abandonedBefore + 3);
    expect(((await next).json as { status: string }).status).toBe("acquired");

    const snapshot = server.service.snapshot(ns);
    expect(snapshot.waitingRequests).toBe(0);
    expect(snapshot.descriptors.map((d) => [d.descriptor, d.holders.length, d.queue.length])).toEqual([
      ["a", 1, 0],
      ["granted-with-id", 1, 0],
      ["z", 1, 0],
    ]);
    // The entry granted with a requestId and delivered is kept (a retry recovers it), as for lock.
    const retry = await postJson(server.url, ns, "lock", exclusive("granted-with-id", { requestId: "delivered" }));
    expect((retry.json as { token: string }).token).toBe(tokenOf(granted));
    // The abandoned requestId is forgotten: it can be reused for something else.
    const reuse = await postJson(server.url, ns, "lock", exclusive("other", { requestId: "kept-id" }));
    expect((reuse.json as { status: string }).status).toBe("acquired");
    await postJson(server.url, ns, "unlock", { tokens: [(blocker.json as { token: string }).token] });
  });

  it("many batches dropped at once leave no waiter and no holder behind", async () => {
    const ns = uniqueNamespace("gone");
    const blocker = await postJson(server.url, ns, "lock", exclusive("hot"));
    const batches = Array.from({ length: 20 }, (_, b) =>
      new BatchStream(server.url, ns, {
        requests: Array.from({ length: 5 }, (_, i) => ({
          locks: [{ descriptor: `own-${b}-${i}`, mode: "exclusive" }, { descriptor: "hot", mode: "exclusive" }],
          acquireTimeoutMs: 30_000,
        })),
      }),
    );
    await waitFor(() => server.service.snapshot(ns).waitingRequests === 100, "all 100 entries to wait");
    for (const batch of batches) batch.req.destroy();
    await waitFor(() => server.service.snapshot(ns).waitingRequests === 0, "every entry to be abandoned");
    await sleep(20);
    const snapshot = server.service.snapshot(ns);
    expect(snapshot.heldTokens).toBe(1);
    expect(snapshot.descriptors.map((d) => [d.descriptor, d.holders.length, d.queue.length])).toEqual([["hot", 1, 0]]);
    await postJson(server.url, ns, "unlock", { tokens: [(blocker.json as { token: string }).token] });
    expect(server.service.snapshot(ns).heldTokens).toBe(0);
  });
});
