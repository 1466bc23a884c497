import { connect, type Socket } from "node:net";
import type { ReplicationTransport } from "./replication-sender.js";
import type { ReplicationAck, ReplicationMessage } from "./replication-wire.js";

/** Options of {@link createEchoReplicationTransport}. */
export interface EchoReplicationTransportOptions {
  /** Port of the echo server on the same host (it writes back every byte it reads). */
  readonly port: number;
  /** Its host. Default `127.0.0.1`. */
  readonly host?: string | undefined;
}

/** The sequence number a message brings the stream to: the snapshot's, or the last entry's. */
function upToOf(message: ReplicationMessage): number {
  return message.kind === "snapshot" ? message.seq : message.fromSeq + message.entries.length;
}

/**
 * BENCHMARK ONLY, and unsafe: the cost floor of a standby (`LEASEHOLD_TEST_ECHO_STANDBY_PORT`,
 * test-breaks.ts). Each message costs one byte to an echo server and one byte back, and is then
 * "acknowledged" up to its last entry: no encoding, no MAC, no standby applying anything. The
 * leader keeps its whole side (entries built, answers held until the acknowledgement, the row
 * marked in sync), so what a leader with a real standby pays beyond this is what encoding,
 * authenticating and applying cost; what this pays beyond a single server is the price of waiting
 * for another process at all. The "standby" holds nothing, so a takeover would lose every lock:
 * never outside a benchmark.
 */
export function createEchoReplicationTransport(options: EchoReplicationTransportOptions): ReplicationTransport {
  const pending: { readonly upTo: number; readonly resolve: (ack: ReplicationAck) => void; readonly reject: (err: Error) => void }[] = [];
  let socket: Socket | null = null;
  let closed = false;
  const one = Buffer.from([0x2e]);

  function fail(err: Error): void {
    socket?.destroy();
    socket = null;
    for (const p of pending.splice(0)) p.reject(err);
  }

  function open(): Socket {
    const s = connect(options.port, options.host ?? "127.0.0.1");
    s.setNoDelay(true);
    s.on("data", (chunk: Buffer) => {
      for (let i = 0; i < chunk.length; i++) {
        const p = pending.shift();
        if (p === undefined) return fail(new Error("the echo server answered a message that was not sent"));
        p.resolve({ ackedSeq: p.upTo });
      }
    });
    s.on("error", () => undefined); // 'close' follows
    s.once("close", () => {
      if (socket === s) fail(new Error(`the echo server at port ${options.port} closed the connection`));
    });
    return s;
  }

  return {
    send(message) {
      if (closed) return Promise.reject(new Error("the replication transport is closed"));
      socket ??= open();
      const s = socket;
      return new Promise<ReplicationAck>((resolve, reject) => {
        pending.push({ upTo: upToOf(message), resolve, reject });
        s.write(one);
      });
    },
    close() {
      closed = true;
      fail(new Error("the replication transport is closed"));
      return Promise.resolve();
    },
  };
}
