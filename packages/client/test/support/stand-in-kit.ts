import { startServer, type RunningServer } from "@leasehold/server";
import { afterEach } from "vitest";
import { LockClient, type HttpLockClientOptions } from "../../src/index.js";
import { captureLogger } from "./capture-logger.js";
import { standIn, type ClusterState, type StandIn } from "./stand-in-cluster.js";

/** Fast backoff, so tests that wait do not wait the defaults. */
export const FAST_RETRY = { minTimeoutMs: 20, maxTimeoutMs: 200 } as const;

/** What the client cluster tests build with; everything built is closed after each test, newest first. */
export interface StandInKit {
  /** A real server behind stand-in members, with the `leaderId` its health reports. */
  backend(leaseMs: number): Promise<RunningServer & { leaderId: string }>;
  /** A stand-in member (support/stand-in-cluster.ts) forwarding the shards it leads to `backendUrl`. */
  member(name: string, state: ClusterState, backendUrl?: string): Promise<StandIn>;
  /** An HTTP client of the kit's namespace with captured logs and {@link FAST_RETRY}, overridable. */
  client(options: Partial<HttpLockClientOptions>): LockClient;
  /** Run `close` after the test, with the rest. */
  closeAfter(close: () => Promise<unknown>): void;
}

/** A {@link StandInKit} for `namespace`; call it at the top of a test file (it registers an `afterEach`). */
export function standInKit(namespace: string): StandInKit {
  const cleanups: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });
  return {
    async backend(leaseMs) {
      const server = await startServer({ leaseMs });
      cleanups.push(() => server.close());
      const health = (await (await fetch(`${server.url}/v1/health`)).json()) as { leaderId: string };
      return Object.assign(server, { leaderId: health.leaderId });
    },
    async member(name, state, backendUrl) {
      const s = await standIn(name, state, backendUrl);
      cleanups.push(() => s.close());
      return s;
    },
    client(options) {
      const c = LockClient.http({ namespace, logger: captureLogger().logger, retry: FAST_RETRY, ...options } as HttpLockClientOptions);
      cleanups.push(() => c.close());
      return c;
    },
    closeAfter(close) {
      cleanups.push(close);
    },
  };
}
