import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { LockRequest, LockResponse } from "@leasehold/protocol";
import { pino } from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createRequestHandler } from "../../src/http/create-request-handler.js";
import { createServerMetrics } from "../../src/metrics/server-metrics.js";
import { FakeLockService } from "../support/fake-lock-service.js";
import { sleep, waitFor } from "../support/wait-for.js";
import { BatchStream, exclusive } from "./support/batch-stream.js";

const granted = (token: string): LockResponse => ({
  status: "acquired",
  token,
  lease: { leaderId: "fake-leader", validForMs: 1000 },
  acquired: [{ descriptor: "d", mode: "exclusive", fencingToken: 7 }],
});

describe("lock-batch: grants whose line could not be written", () => {
  let service: FakeLockService;
  let server: Server;
  let url: string;

  beforeEach(async () => {
    service = new FakeLockService();
    const metrics = createServerMetrics(() => service.metrics(), { version: "test", leaderId: service.leaderId });
    server = createServer(createRequestHandler({ service, metrics, logger: pino({ level: "silent" }), isClosing: () => false }));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterEach(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it("a grant without a requestId that lands after the client left is released; one with a requestId is kept; a flushed line is kept", async () => {
    let land!: () => void;
    const landed = new Promise<void>((r) => (land = r));
    service.onLock = async (request: LockRequest) => {
      const name = request.locks[0]?.descriptor ?? "?";
      if (name !== "at-once") await landed;
      return granted(`tok-${name}`);
    };
    const batch = new BatchStream(url, "ns", {
      requests: [exclusive("at-once"), exclusive("late-anonymous"), exclusive("late-with-id", { requestId: "r" })],
    });
    const first = await batch.next();
    expect(first.index).toBe(0);
    batch.req.destroy();
    await sleep(50);
    land();
    await waitFor(() => service.unlocked.length === 1, "the undelivered grant to be released");
    await sleep(50);
    // Only the anonymous late grant: "at-once" reached the client, "late-with-id" can be recovered by a retry.
    expect(service.unlocked).toEqual([["tok-late-anonymous"]]);
  });
});
