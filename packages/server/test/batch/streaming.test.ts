import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { responseValidators } from "@leasehold/protocol";
import { startServer, type RunningServer } from "../../src/start-server.js";
import { uniqueNamespace, waitFor } from "../support/wait-for.js";
import { BatchStream, exclusive, resultOf, tokenOf } from "./support/batch-stream.js";
import { postJson } from "./support/post-json.js";

describe("lock-batch over a real socket: lines arrive as each entry resolves", () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(async () => {
    await server.close();
  });

  const unlock = (ns: string, token: string) => postJson(server.url, ns, "unlock", { tokens: [token] });

  it("answers 200 application/x-ndjson, chunked, one schema-valid line per entry", async () => {
    const ns = uniqueNamespace("batch");
    const batch = new BatchStream(server.url, ns, { requests: [exclusive("a"), exclusive("b"), { locks: [{ descriptor: "c", mode: "shared" }] }] });
    const lines = await batch.done;
    expect(batch.status).toBe(200);
    expect(batch.headers["content-type"]).toBe("application/x-ndjson; charset=utf-8");
    expect(batch.headers["transfer-encoding"]).toBe("chunked");
    expect(batch.headers["content-length"]).toBeUndefined();
    expect(lines.map((l) => l.index).sort()).toEqual([0, 1, 2]);
    for (const line of lines) {
      expect(responseValidators["lock-batch"].check(line)).toBe(true);
      expect(resultOf(line).status).toBe("acquired");
    }
  });

  it("a waiting entry does not hold back the granted ones: their lines are read before the blocker is released", async () => {
    const ns = uniqueNamespace("batch");
    const blocker = await postJson(server.url, ns, "lock", exclusive("busy"));
    const blockerToken = (blocker.json as { token: string }).token;
    const batch = new BatchStream(server.url, ns, {
      requests: [exclusive("busy", { acquireTimeoutMs: 30_000 }), exclusive("free-1"), exclusive("free-2")],
    });
    // Both free entries arrive while entry 0 still waits: the blocker has not been released yet.
    const first = await batch.next();
    const second = await batch.next();
    expect([first.index, second.index].sort()).toEqual([1, 2]);
    expect(server.service.snapshot(ns).waitingRequests).toBe(1);
    expect(batch.lines).toHaveLength(2);

    await unlock(ns, blockerToken);
    const third = await batch.next();
    expect(third.index).toBe(0);
    expect(resultOf(third).status).toBe("acquired");
    await batch.done;
    expect(batch.lines).toHaveLength(3);
  });

  it("the 200 head is sent at once even when every entry has to wait", async () => {
    const ns = uniqueNamespace("batch");
    const blocker = await postJson(server.url, ns, "lock", exclusive("x"));
    const batch = new BatchStream(server.url, ns, { requests: [exclusive("x", { acquireTimeoutMs: 30_000 })] });
    await batch.head;
    expect(batch.status).toBe(200);
    expect(batch.lines, JSON.stringify(batch.lines)).toHaveLength(0);
    await unlock(ns, (blocker.json as { token: string }).token);
    expect(tokenOf(await batch.next())).toEqual(expect.any(String));
  });

  it("entries are queued in array order: FIFO on one descriptor across entries of one batch", async () => {
    const ns = uniqueNamespace("batch");
    const blocker = await postJson(server.url, ns, "lock", exclusive("q"));
    let holder = (blocker.json as { token: string }).token;
    const batch = new BatchStream(server.url, ns, {
      requests: [0, 1, 2, 3].map((i) => exclusive("q", { acquireTimeoutMs: 30_000, clientDescription: `entry-${i}` })),
    });
    await waitFor(() => server.service.snapshot(ns).waitingRequests === 4, "four entries to queue");
    const order: number[] = [];
    for (let i = 0; i < 4; i++) {
      await unlock(ns, holder);
      const line = await batch.next();
      order.push(line.index);
      holder = tokenOf(line);
    }
    expect(order).toEqual([0, 1, 2, 3]);
    await unlock(ns, holder);
    await batch.done;
  });

  it("FIFO against single requests: a batch entry never overtakes an earlier single lock, nor a later one it", async () => {
    const ns = uniqueNamespace("batch");
    const blocker = await postJson(server.url, ns, "lock", exclusive("q"));
    let holder = (blocker.json as { token: string }).token;
    const early = postJson(server.url, ns, "lock", exclusive("q", { acquireTimeoutMs: 30_000 }));
    await waitFor(() => server.service.snapshot(ns).waitingRequests === 1, "the early single lock to queue");
    // Shared would be compatible with another shared holder, but must still queue behind the exclusive.
    const batch = new BatchStream(server.url, ns, {
      requests: [exclusive("q", { acquireTimeoutMs: 30_000 }), { locks: [{ descriptor: "q", mode: "shared" }], acquireTimeoutMs: 30_000 }],
    });
    await waitFor(() => server.service.snapshot(ns).waitingRequests === 3, "the batch to queue");
    const late = postJson(server.url, ns, "lock", exclusive("q", { acquireTimeoutMs: 30_000 }));
    await waitFor(() => server.service.snapshot(ns).waitingRequests === 4, "the late single lock to queue");
    expect(server.service.snapshot(ns).descriptors[0]?.queue.map((q) => q.mode)).toEqual(["exclusive", "exclusive", "shared", "exclusive"]);

    await unlock(ns, holder);
    holder = ((await early).json as { token: string }).token;
    expect(batch.lines).toHaveLength(0);
    await unlock(ns, holder);
    holder = tokenOf(await batch.next());
    expect(batch.lines[0]?.index).toBe(0);
    await unlock(ns, holder);
    const shared = await batch.next();
    expect(shared.index).toBe(1);
    expect(server.service.snapshot(ns).waitingRequests).toBe(1);
    await unlock(ns, tokenOf(shared));
    const lateToken = ((await late).json as { token: string }).token;
    await unlock(ns, lateToken);
    await batch.done;
  });
});
