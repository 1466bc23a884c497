import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { LockResponse } from "@leasehold/protocol";
import { pino } from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createRequestHandler } from "../../src/http/create-request-handler.js";
import { createServerMetrics } from "../../src/metrics/server-metrics.js";
import { FakeLockService } from "../support/fake-lock-service.js";
import { sleep } from "../support/wait-for.js";
import { BatchStream, exclusive } from "./support/batch-stream.js";

const granted = (token: string): LockResponse => ({
  status: "acquired",
  token,
  lease: { leaderId: "fake-leader", validForMs: 1000 },
  acquired: [{ descriptor: "d", mode: "exclusive", fencingToken: 7 }],
});

describe("lock-batch: when its head leaves", () => {
  let service: FakeLockService;
  let server: Server;
  let url: string;
  let land: () => void;

  beforeEach(async () => {
    service = new FakeLockService();
    const landed = new Promise<void>((r) => (land = r));
    let n = 0;
    service.onLock = async () => {
      const token = `t${n++}`;
      await landed;
      return granted(token);
    };
    const metrics = createServerMetrics(() => service.metrics(), { version: "test", leaderId: service.leaderId });
    server = createServer(createRequestHandler({ service, metrics, logger: pino({ level: "silent" }), isClosing: () => false }));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterEach(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it("entries that wait for locks: the head leaves at once, before any line", async () => {
    const batch = new BatchStream(url, "ns", { requests: [exclusive("a"), exclusive("b")] });
    await batch.head;
    expect(batch.status).toBe(200);
    land();
    expect((await batch.done).map((l) => l.index).sort()).toEqual([0, 1]);
  });

  it("entries granted and only waiting for the standby's acknowledgement: the head leaves with their lines, not before", async () => {
    service.acknowledging = true;
    const batch = new BatchStream(url, "ns", { requests: [exclusive("a"), exclusive("b")] });
    const first = await Promise.race([batch.head.then(() => "head"), sleep(200).then(() => "nothing yet")]);
    expect(first).toBe("nothing yet");
    land();
    await batch.head;
    expect(batch.status).toBe(200);
    expect((await batch.done).map((l) => l.index).sort()).toEqual([0, 1]);
  });
});
