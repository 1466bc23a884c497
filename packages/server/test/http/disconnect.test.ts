import type { ClientRequest } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type RunningServer } from "../../src/start-server.js";
import { rawRequest } from "../support/raw-request.js";
import { waitFor } from "../support/wait-for.js";

const json = { "content-type": "application/json" };

describe("HTTP: a client that disconnects while its lock request waits", () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(async () => {
    await server.close();
  });

  const lock = (ns: string, body: object, onRequest?: (req: ClientRequest) => void) =>
    rawRequest(server.url, `/v1/namespaces/${ns}/lock`, { body: JSON.stringify(body), headers: json, onRequest });

  it("is abandoned: it leaves the queue, releases what it had acquired, and the next waiter gets the lock", async () => {
    const ns = "disconnect-1";
    const holder = await lock(ns, { locks: [{ descriptor: "b", mode: "exclusive" }] });
    const holderToken = (holder.json as { token: string }).token;

    // The doomed request acquires "a" (it sorts first) and waits on "b".
    let doomed: ClientRequest | undefined;
    const doomedAnswer = lock(ns, { locks: [{ descriptor: "a", mode: "exclusive" }, { descriptor: "b", mode: "exclusive" }], acquireTimeoutMs: 60_000 }, (req) => {
      doomed = req;
    });
    doomedAnswer.catch(() => undefined);
    await waitFor(() => server.service.snapshot(ns).waitingRequests === 1, "the doomed request to wait");
    const next = lock(ns, { locks: [{ descriptor: "b", mode: "exclusive" }], acquireTimeoutMs: 60_000 });
    await waitFor(() => server.service.snapshot(ns).waitingRequests === 2, "the next request to queue behind it");
    const abandonedBefore = server.service.metrics().abandonedTotal;

    doomed?.destroy();
    await waitFor(() => server.service.snapshot(ns).waitingRequests === 1, "the doomed request to leave the queue");
    expect(server.service.metrics().abandonedTotal).toBe(abandonedBefore + 1);
    // What it had acquired ("a") is free again.
    const a = await lock(ns, { locks: [{ descriptor: "a", mode: "exclusive" }] });
    expect((a.json as { status: string }).status).toBe("acquired");

    await rawRequest(server.url, `/v1/namespaces/${ns}/unlock`, { body: JSON.stringify({ tokens: [holderToken] }), headers: json });
    const granted = await next;
    expect((granted.json as { status: string }).status).toBe("acquired");

    // No ghost: "b" has exactly one holder, "a" exactly one, and nobody waits.
    const snapshot = server.service.snapshot(ns);
    expect(snapshot.waitingRequests).toBe(0);
    expect(snapshot.heldTokens).toBe(2);
    expect(snapshot.descriptors.map((d) => [d.descriptor, d.holders.length, d.queue.length])).toEqual([
      ["a", 1, 0],
      ["b", 1, 0],
    ]);
  });

  it("many concurrent disconnects leave no waiter and no holder behind", async () => {
    const ns = "disconnect-2";
    const holder = await lock(ns, { locks: [{ descriptor: "hot", mode: "exclusive" }] });
    const requests: ClientRequest[] = [];
    const answers = Array.from({ length: 30 }, (_, i) =>
      lock(ns, { locks: [{ descriptor: `own-${i}`, mode: "exclusive" }, { descriptor: "hot", mode: "shared" }], acquireTimeoutMs: 60_000 }, (req) => requests.push(req)).catch(() => undefined),
    );
    await waitFor(() => server.service.snapshot(ns).waitingRequests === 30, "30 waiting requests");
    for (const req of requests) req.destroy();
    await Promise.all(answers);
    await waitFor(() => server.service.snapshot(ns).waitingRequests === 0, "every request abandoned");
    const snapshot = server.service.snapshot(ns);
    expect(snapshot.heldTokens).toBe(1);
    expect(snapshot.descriptors.map((d) => d.descriptor)).toEqual(["hot"]);
    void holder;
  });
});
