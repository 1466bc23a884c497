import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type RunningServer } from "../../src/start-server.js";
import { rawRequest } from "../support/raw-request.js";
import { uniqueNamespace, waitFor } from "../support/wait-for.js";
import { BatchStream, exclusive, tokenOf } from "./support/batch-stream.js";
import { postJson } from "./support/post-json.js";

/** The value of one sample line of the Prometheus text, or 0 when it is absent. */
function sample(text: string, name: string): number {
  const line = text.split("\n").find((l) => l.startsWith(`${name} `));
  return line === undefined ? 0 : Number(line.slice(name.length + 1));
}

describe("lock-batch: metrics stay right", () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(async () => {
    await server.close();
  });

  const scrape = async () => (await rawRequest(server.url, "/metrics", { method: "GET" })).text;

  it("counts each entry's grants, timeouts and waits like single locks, and the batch as one lock-batch request", async () => {
    const ns = uniqueNamespace("metrics");
    const blocker = await postJson(server.url, ns, "lock", exclusive("busy"));
    const before = await scrape();
    const batch = new BatchStream(server.url, ns, {
      requests: [exclusive("a"), exclusive("b"), exclusive("busy"), exclusive("busy", { acquireTimeoutMs: 30_000 }), { locks: [] }],
    });
    await waitFor(() => server.service.snapshot(ns).waitingRequests === 1, "one entry to wait");
    await batch.next();
    const during = await scrape();
    expect(sample(during, "leasehold_grants_total") - sample(before, "leasehold_grants_total")).toBe(2);
    expect(sample(during, "leasehold_timeouts_total") - sample(before, "leasehold_timeouts_total")).toBe(1);
    expect(sample(during, "leasehold_waiting_requests")).toBe(sample(before, "leasehold_waiting_requests") + 1);

    await postJson(server.url, ns, "unlock", { tokens: [(blocker.json as { token: string }).token] });
    const lines = await batch.done;
    const after = await scrape();
    expect(sample(after, "leasehold_grants_total") - sample(before, "leasehold_grants_total")).toBe(3);
    expect(sample(after, "leasehold_waiting_requests")).toBe(sample(before, "leasehold_waiting_requests"));
    expect(sample(after, "leasehold_held_tokens")).toBe(sample(before, "leasehold_held_tokens") - 1 + 3);
    expect(after).toContain('leasehold_requests_total{operation="lock-batch",status="200"} 1');
    expect(lines).toHaveLength(5);
    await postJson(server.url, ns, "unlock", { tokens: lines.filter((l) => "result" in l && l.result.status === "acquired").map(tokenOf) });
    await postJson(server.url, ns, "lock-cancel", { requestId: "nothing" });
    expect(await scrape()).toContain('leasehold_requests_total{operation="lock-cancel",status="200"} 1');
  });

  it("a dropped batch is recorded as 499 and its entries as abandoned", async () => {
    const ns = uniqueNamespace("metrics");
    await postJson(server.url, ns, "lock", exclusive("busy"));
    const before = await scrape();
    const batch = new BatchStream(server.url, ns, { requests: [exclusive("busy", { acquireTimeoutMs: 30_000 }), exclusive("busy", { acquireTimeoutMs: 30_000 })] });
    await waitFor(() => server.service.snapshot(ns).waitingRequests === 2, "both entries to wait");
    batch.req.destroy();
    await waitFor(() => server.service.snapshot(ns).waitingRequests === 0, "both entries to be abandoned");
    const after = await scrape();
    expect(sample(after, "leasehold_abandoned_total") - sample(before, "leasehold_abandoned_total")).toBe(2);
    expect(await scrape()).toContain('leasehold_requests_total{operation="lock-batch",status="499"} 1');
  });
});
