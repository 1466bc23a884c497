import { connect, createServer, type AddressInfo } from "node:net";
import { DIRECTIONS, checkRates, emptyKindCounts, type FaultCounts, type FaultEvent, type FaultRates } from "./fault-kinds.js";
import { ProxiedConnection, type MsRange, type ProxyContext } from "./proxied-connection.js";

export type { MsRange } from "./proxied-connection.js";

/** Options of {@link startFaultProxy}. */
export interface FaultProxyOptions {
  /** Where the proxy forwards to (the server). `host` defaults to `127.0.0.1`. */
  readonly target: { readonly host?: string | undefined; readonly port: number };
  /**
   * Seed of every fault decision. Each connection direction draws from its own generator seeded
   * by (seed, connection number, direction), so the k-th chunk of the n-th connection meets the
   * same fate in every run with this seed (the interleaving of real sockets still varies).
   */
  readonly seed: number;
  /** Fault rates on the bytes clients send. Default: none. */
  readonly toServer?: FaultRates | undefined;
  /** Fault rates on the bytes the server sends. Default: none. */
  readonly toClient?: FaultRates | undefined;
  /** How long a `delay` holds a chunk. Default 5..150 ms. */
  readonly delayMs?: MsRange | undefined;
  /**
   * After a `drop`, how long the server side stays open once the client side has closed (the server
   * learns of the disconnect this late, as behind a middlebox that lost the FIN). Default 0..2,000 ms.
   */
  readonly lingerMs?: MsRange | undefined;
  /** Called for every fault injected. Default: nothing. */
  readonly onFault?: ((event: FaultEvent) => void) | undefined;
}

/** A running fault proxy. */
export interface FaultProxy {
  /** `http://127.0.0.1:<port>`: give it to clients instead of the server's URL. */
  readonly url: string;
  readonly port: number;
  /** Turn fault injection on (the default) or off; off, every chunk is forwarded untouched. */
  setFaults(enabled: boolean): void;
  /**
   * Hold every chunk `ms` in each direction from now on (0, the default, forwards at once), faults
   * on or off: a statement's round trip grows by `2 × ms`. A fixed hold keeps the stream's order.
   */
  setLatency(ms: number): void;
  /** Connections, chunks and faults so far. */
  counts(): FaultCounts;
  /** Proxied connections not yet fully closed. */
  openConnections(): number;
  /** Stop accepting and destroy every proxied connection, both sides. Idempotent. */
  close(): Promise<void>;
}

/**
 * Start a TCP proxy on 127.0.0.1 (an ephemeral port) in front of `target` that injects faults into
 * both directions of every connection at the seeded rates (see {@link FaultKind}). Each client
 * connection gets its own upstream connection; chunks are forwarded in order.
 */
export async function startFaultProxy(options: FaultProxyOptions): Promise<FaultProxy> {
  checkRates(options.toServer ?? {}, "toServer");
  checkRates(options.toClient ?? {}, "toClient");
  const context: ProxyContext = {
    seed: options.seed,
    rates: { toServer: options.toServer ?? {}, toClient: options.toClient ?? {} },
    onFault: options.onFault,
    delay: options.delayMs ?? { min: 5, max: 150 },
    linger: options.lingerMs ?? { min: 0, max: 2_000 },
    faults: { toServer: emptyKindCounts(), toClient: emptyKindCounts() },
    chunks: { toServer: 0, toClient: 0 },
    enabled: true,
    latencyMs: 0,
  };
  const live = new Set<ProxiedConnection>();
  let accepted = 0;
  const server = createServer((client) => {
    const upstream = connect({ host: options.target.host ?? "127.0.0.1", port: options.target.port });
    client.setNoDelay(true);
    upstream.setNoDelay(true);
    // Errors (resets, refused) end in 'close', which the connection handles; never crash on them.
    client.on("error", () => undefined);
    upstream.on("error", () => undefined);
    const conn = new ProxiedConnection(accepted++, client, upstream, context);
    live.add(conn);
    let closed = 0;
    const onClose = (): void => {
      if (++closed === 2) live.delete(conn);
    };
    client.once("close", onClose);
    upstream.once("close", onClose);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen({ host: "127.0.0.1", port: 0 }, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  let closing: Promise<void> | undefined;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    setFaults: (enabled) => {
      context.enabled = enabled;
    },
    setLatency: (ms) => {
      if (!(ms >= 0)) throw new RangeError(`latency must be at least 0 ms (got ${ms})`);
      context.latencyMs = ms;
    },
    counts: () => {
      const faults = { toServer: { ...context.faults.toServer }, toClient: { ...context.faults.toClient } };
      let total = 0;
      for (const d of DIRECTIONS) for (const n of Object.values(faults[d])) total += n;
      return { connections: accepted, chunks: { ...context.chunks }, faults, total };
    },
    openConnections: () => live.size,
    close: () =>
      (closing ??= (async () => {
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        for (const conn of live) conn.destroy();
        await closed;
      })()),
  };
}
