import { startServer, type RunningServer } from "@leasehold/server";
import { LockClient, type LockClientOptions } from "../../../src/index.js";
import { captureLogger } from "../../support/capture-logger.js";
import { TEST_RETRY } from "../../support/harness.js";

/** A real HTTP server and clients of it over real sockets; `close()` closes them all. */
export interface RecipeServer {
  readonly server: RunningServer;
  client(options?: Partial<LockClientOptions>): LockClient;
  close(): Promise<void>;
}

export async function recipeServer(options: { readonly leaseMs?: number; readonly namespace: string }): Promise<RecipeServer> {
  const server = await startServer(options.leaseMs === undefined ? {} : { leaseMs: options.leaseMs });
  const clients: LockClient[] = [];
  return {
    server,
    client: (o = {}) => {
      const c = LockClient.http({ baseUrl: server.url, namespace: options.namespace, logger: captureLogger().logger, retry: TEST_RETRY, ...o });
      clients.push(c);
      return c;
    },
    close: async () => {
      await Promise.all(clients.map((c) => c.close()));
      await server.close();
    },
  };
}

/** Yield to the event loop, so other workers' steps can run in between. */
export const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
