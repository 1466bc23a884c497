import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type RunningServer } from "../../src/start-server.js";
import { errorOf } from "../support/raw-request.js";
import { uniqueNamespace, waitFor } from "../support/wait-for.js";
import { BatchStream, codeOf, exclusive, resultOf, tokenOf } from "./support/batch-stream.js";
import { postJson } from "./support/post-json.js";

describe("lock-cancel: give up one lock request without disturbing the rest", () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(async () => {
    await server.close();
  });

  const cancel = async (ns: string, requestId: string) => (await postJson(server.url, ns, "lock-cancel", { requestId })).json as { cancelled: boolean };

  it("cancelling one waiting entry answers its line CANCELLED, frees what it held, and leaves the others waiting in order", async () => {
    const ns = uniqueNamespace("cancel");
    const blocker = await postJson(server.url, ns, "lock", exclusive("q"));
    const batch = new BatchStream(server.url, ns, {
      requests: [
        exclusive("q", { requestId: "keep-0", acquireTimeoutMs: 30_000 }),
        { requestId: "drop", locks: [{ descriptor: "held-by-drop", mode: "exclusive" }, { descriptor: "q", mode: "exclusive" }], acquireTimeoutMs: 30_000 },
        exclusive("q", { requestId: "keep-2", acquireTimeoutMs: 30_000 }),
      ],
    });
    await waitFor(() => server.service.snapshot(ns).waitingRequests === 3, "three entries to wait");
    const abandonedBefore = server.service.metrics().abandonedTotal;

    expect(await cancel(ns, "drop")).toEqual({ cancelled: true });
    const line = await batch.next();
    expect(line.index).toBe(1);
    expect(codeOf(line)).toBe("CANCELLED");
    expect("error" in line && line.error.details).toEqual({ requestId: "drop" });
    expect(server.service.metrics().abandonedTotal).toBe(abandonedBefore + 1);
    const snapshot = server.service.snapshot(ns);
    expect(snapshot.waitingRequests).toBe(2);
    expect(snapshot.descriptors.map((d) => [d.descriptor, d.holders.length, d.queue.length])).toEqual([["q", 1, 2]]);
    // A second cancel finds nothing: the request is gone.
    expect(await cancel(ns, "drop")).toEqual({ cancelled: false });

    await postJson(server.url, ns, "unlock", { tokens: [(blocker.json as { token: string }).token] });
    const zero = await batch.next();
    expect(zero.index).toBe(0);
    await postJson(server.url, ns, "unlock", { tokens: [tokenOf(zero)] });
    const two = await batch.next();
    expect(two.index).toBe(2);
    await postJson(server.url, ns, "unlock", { tokens: [tokenOf(two)] });
    await batch.done;
    expect(batch.lines).toHaveLength(3);
  });

  it("cancelling a granted request releases it; an unknown requestId answers cancelled false", async () => {
    const ns = uniqueNamespace("cancel");
    const lines = await new BatchStream(server.url, ns, { requests: [exclusive("g", { requestId: "got-it" })] }).done;
    expect(resultOf(lines[0]!).status).toBe("acquired");
    const unlocksBefore = server.service.metrics().unlocksTotal;
    expect(await cancel(ns, "got-it")).toEqual({ cancelled: true });
    expect(server.service.snapshot(ns).heldTokens).toBe(0);
    expect(server.service.metrics().unlocksTotal).toBe(unlocksBefore + 1);
    expect(await cancel(ns, "never-seen")).toEqual({ cancelled: false });
    // Cancelling in a namespace never used creates nothing.
    const fresh = uniqueNamespace("never");
    expect(await cancel(fresh, "x")).toEqual({ cancelled: false });
    expect(server.service.snapshot(fresh).nextTimestamp).toBe(1);
  });

  it("cancel is per namespace: the same requestId in another namespace is untouched", async () => {
    const a = uniqueNamespace("cancel");
    const b = uniqueNamespace("cancel");
    await postJson(server.url, a, "lock", exclusive("d", { requestId: "shared-id" }));
    expect(await cancel(b, "shared-id")).toEqual({ cancelled: false });
    expect(server.service.snapshot(a).heldTokens).toBe(1);
  });

  it("cancels a waiting single lock too: it is answered 499 CANCELLED", async () => {
    const ns = uniqueNamespace("cancel");
    await postJson(server.url, ns, "lock", exclusive("d"));
    const waiting = postJson(server.url, ns, "lock", exclusive("d", { requestId: "single", acquireTimeoutMs: 30_000 }));
    await waitFor(() => server.service.snapshot(ns).waitingRequests === 1, "the single lock to wait");
    expect(await cancel(ns, "single")).toEqual({ cancelled: true });
    const answer = await waiting;
    expect(answer.status).toBe(499);
    expect(errorOf(answer).code).toBe("CANCELLED");
  });
});
