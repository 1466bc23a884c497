import { startServer, createLockService, type EmbeddedLockService, type LockServiceOptions } from "@leasehold/server";
import { LockClient, type LockClientOptions } from "../../src/index.js";
import { captureLogger } from "./capture-logger.js";

/** One backend (embedded or over HTTP) and a way to make clients of it. */
export interface Harness {
  readonly name: string;
  /** The server-side service, for snapshots of its lock table. */
  readonly service: EmbeddedLockService;
  /** A new client of the backend (closed by `close()`). */
  client(options?: Partial<LockClientOptions>): LockClient;
  close(): Promise<void>;
}

export type HarnessFactory = (options: LockServiceOptions) => Promise<Harness>;

/** Fast transport retries, so tests that break connections do not wait for the defaults. */
export const TEST_RETRY = { maxRetries: 12, minTimeoutMs: 10, maxTimeoutMs: 200 } as const;

function tracker() {
  const clients: LockClient[] = [];
  return {
    add: (c: LockClient): LockClient => (clients.push(c), c),
    closeAll: () => Promise.all(clients.map((c) => c.close())),
  };
}

export const embeddedHarness: HarnessFactory = async (options) => {
  const service = createLockService(options);
  const clients = tracker();
  return {
    name: "embedded",
    service,
    client: (o = {}) => clients.add(LockClient.embedded(service, { namespace: "suite", logger: captureLogger().logger, ...o })),
    close: async () => {
      await clients.closeAll();
      await service.close();
    },
  };
};

export const httpHarness: HarnessFactory = async (options) => {
  const server = await startServer(options);
  const clients = tracker();
  return {
    name: "http",
    service: server.service,
    client: (o = {}) =>
      clients.add(LockClient.http({ baseUrl: server.url, namespace: "suite", logger: captureLogger().logger, retry: TEST_RETRY, ...o })),
    close: async () => {
      await clients.closeAll();
      await server.close();
    },
  };
};

/** The HTTP backend with `lockBatching: true` on every client: the contract must hold through batches. */
export const httpBatchedHarness: HarnessFactory = async (options) => {
  const harness = await httpHarness(options);
  return { ...harness, name: "http+lockBatching", client: (o = {}) => harness.client({ lockBatching: true, ...o }) };
};
