import { getEventListeners } from "node:events";
import { describe, expect, it } from "vitest";
import { startServer, type RunningServer } from "../../src/start-server.js";
import { sleep, waitFor } from "../support/wait-for.js";
import { settled } from "./cluster-support.js";
import { schemaPerTest } from "./pg-schema.js";

// The cluster service's side of issue 23: one AbortSignal given to 200 waiting lock calls (and a
// lock batch) adds one abort listener, not 200 (Node warns past 10), and aborting it still ends
// every wait. Real waits in a real one-server cluster over PostgreSQL.
const CALLS = 200;

describe("cluster service: one AbortSignal shared by many waiting calls", () => {
  const bed = schemaPerTest<RunningServer>();

  it("listens once per signal, and one abort cancels all 200 waits and the batch", async () => {
    const warnings: Error[] = [];
    const onWarning = (w: Error): void => void warnings.push(w);
    process.on("warning", onWarning);
    try {
      const server = await startServer({ leaseMs: 30_000, cluster: { connectionString: bed.schema.connectionString, shards: 1 } });
      bed.open.push(server);
      await settled([server.url]);
      const { service } = server;
      const lock = { descriptor: "shared-signal", mode: "exclusive" as const };
      const held = await service.lock("ns", { locks: [lock] });
      expect(held.status).toBe("acquired");
      const shutdown = new AbortController();
      const calls = Array.from({ length: CALLS }, (_, i) =>
        service.lock("ns", { requestId: `wait-${i}`, locks: [lock], acquireTimeoutMs: 30_000 }, { signal: shutdown.signal }),
      );
      const batchResults: unknown[] = [];
      const batch = service.lockBatch(
        "ns",
        { requests: [{ requestId: "batch-0", locks: [lock], acquireTimeoutMs: 30_000 }] },
        (result) => void batchResults.push(result),
        { signal: shutdown.signal },
      );
      const settledCalls = Promise.allSettled(calls);
      await waitFor(() => service.snapshot("ns").waitingRequests === CALLS + 1, "every call waiting", 10_000);
      await sleep(50); // a warning is emitted on a later tick than the listener that causes it
      expect(getEventListeners(shutdown.signal, "abort")).toHaveLength(1);
      shutdown.abort();
      const outcomes = await settledCalls;
      expect(outcomes.filter((o) => o.status === "rejected" && (o.reason as { code?: unknown }).code === "CANCELLED")).toHaveLength(CALLS);
      await batch;
      expect(JSON.stringify(batchResults)).toContain("CANCELLED");
      expect(service.snapshot("ns").waitingRequests).toBe(0);
      expect(getEventListeners(shutdown.signal, "abort")).toHaveLength(0);
      expect(warnings.filter((w) => w.name === "MaxListenersExceededWarning").map((w) => w.message)).toEqual([]);
    } finally {
      process.off("warning", onWarning);
    }
  });
});
