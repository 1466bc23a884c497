import { connect, createServer, type Server, type Socket } from "node:net";
import type { AddressInfo } from "node:net";

/**
 * A TCP proxy in front of a server whose port is known only after the proxy listens (the server
 * advertises the proxy's URL): connections wait for {@link DroppingProxy.target}. While
 * {@link DroppingProxy.partition}ed it passes no bytes in either direction and drops them, with
 * every connection left open: a network partition, no process paused.
 */
export interface DroppingProxy {
  readonly url: string;
  /** Forward to 127.0.0.1:`port` from now on (connections that came earlier connect now). */
  target(port: number): void;
  partition(): void;
  heal(): void;
  close(): Promise<void>;
}

/** Start a {@link DroppingProxy} on an ephemeral port of 127.0.0.1. */
export async function startDroppingProxy(): Promise<DroppingProxy> {
  let resolveTarget: (port: number) => void = () => undefined;
  const targetPort = new Promise<number>((resolve) => (resolveTarget = resolve));
  let dropping = false;
  const sockets = new Set<Socket>();
  const track = (s: Socket): void => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
    s.on("error", () => undefined);
  };
  const server: Server = createServer((client) => {
    track(client);
    client.pause();
    void targetPort.then((port) => {
      const upstream = connect(port, "127.0.0.1");
      track(upstream);
      const forward = (from: Socket, to: Socket): void => {
        from.on("data", (chunk) => {
          if (!dropping) to.write(chunk);
        });
      };
      forward(client, upstream);
      forward(upstream, client);
      client.on("close", () => upstream.destroy());
      upstream.on("close", () => client.destroy());
      client.resume();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    target: (port) => resolveTarget(port),
    partition: () => (dropping = true),
    heal: () => (dropping = false),
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
