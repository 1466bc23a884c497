import { LockClient, type LockClientOptions } from "@leasehold/client";
import { startServer, type EmbeddedLockService, type StartServerOptions } from "@leasehold/server";

/** A lock server over HTTP on loopback and the clients made for it, closed together. */
export interface Backend {
  readonly url: string;
  /** The server's lock table, to observe (how many requests wait), never to act. */
  readonly service: EmbeddedLockService;
  client(options?: Partial<LockClientOptions>): LockClient;
  close(): Promise<void>;
}

export async function httpBackend(options: StartServerOptions = {}): Promise<Backend> {
  const server = await startServer(options);
  const clients: LockClient[] = [];
  return {
    url: server.url,
    service: server.service,
    client: (o = {}) => {
      const c = LockClient.http({
        baseUrl: server.url,
        namespace: "txn-test",
        retry: { maxRetries: 5, minTimeoutMs: 10, maxTimeoutMs: 100 },
        ...o,
      });
      clients.push(c);
      return c;
    },
    close: async () => {
      await Promise.all(clients.map((c) => c.close()));
      await server.close();
    },
  };
}

/** A promise with its resolve function, for ordering steps between concurrent transactions. */
export function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((r) => (open = r));
  return { promise, open };
}
