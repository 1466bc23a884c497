import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { LockResponse } from "@leasehold/protocol";
import { pino } from "pino";
import { createRequestHandler } from "../../../src/http/create-request-handler.js";
import { createServerMetrics } from "../../../src/metrics/server-metrics.js";
import type { FakeLockService } from "../../support/fake-lock-service.js";

/** A grant as the fake service answers it: `token` on descriptor `d`, fencing token 7. */
export const fakeGrant = (token: string): LockResponse => ({
  status: "acquired",
  token,
  lease: { leaderId: "fake-leader", validForMs: 1000 },
  acquired: [{ descriptor: "d", mode: "exclusive", fencingToken: 7 }],
});

/** The HTTP handler over `service` on a real socket; `close` cuts every connection and stops it. */
export async function serveFake(service: FakeLockService): Promise<{ readonly url: string; close(): Promise<void> }> {
  const metrics = createServerMetrics(() => service.metrics(), { version: "test", leaderId: service.leaderId });
  const server = createServer(createRequestHandler({ service, metrics, logger: pino({ level: "silent" }), isClosing: () => false }));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
