import { createServer, type Server, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { createEchoReplicationTransport } from "../../../src/cluster/replication/echo-replication-transport.js";
import type { StreamIdentity } from "../../../src/cluster/replication/replication-wire.js";

const stream: StreamIdentity = { shard: 0, epoch: 1, leaderId: "l", leaderIncarnation: "a", standbyIncarnation: "b", streamId: "s" };

/** An echo server on an ephemeral port; `hold` keeps what it reads until released (to see messages in flight). */
async function echoServer(): Promise<{ server: Server; port: number; sockets: Socket[]; hold: (on: boolean) => void; received: () => number }> {
  let holding = false;
  let held: { socket: Socket; data: Buffer }[] = [];
  let received = 0;
  const sockets: Socket[] = [];
  const server = createServer((socket) => {
    sockets.push(socket);
    socket.on("data", (data) => {
      received += data.length;
      if (holding) held.push({ socket, data });
      else socket.write(data);
    });
    socket.on("error", () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  return {
    server,
    port,
    sockets,
    received: () => received,
    hold(on) {
      holding = on;
      if (!on) {
        for (const h of held) h.socket.write(h.data);
        held = [];
      }
    },
  };
}

const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await new Promise<void>((resolve) => s.close(() => resolve()));
});

describe("the echo standby (benchmark floor, LEASEHOLD_TEST_ECHO_STANDBY_PORT)", () => {
  it("acknowledges each message up to its last entry, in order, only once its byte came back", async () => {
    const echo = await echoServer();
    servers.push(echo.server);
    const transport = createEchoReplicationTransport({ port: echo.port });
    echo.hold(true);
    const acks: number[] = [];
    const snapshot = transport.send({ kind: "snapshot", stream, seq: 7, snapshot: {} }).then((a) => acks.push(a.ackedSeq));
    const first = transport.send({ kind: "entries", stream, fromSeq: 7, entries: [1, 2, 3] }).then((a) => acks.push(a.ackedSeq));
    const second = transport.send({ kind: "entries", stream, fromSeq: 10, entries: [4] }).then((a) => acks.push(a.ackedSeq));
    // One byte per message reaches the echo server; nothing is acknowledged while it holds them.
    await expect.poll(() => echo.received()).toBe(3);
    await new Promise((r) => setTimeout(r, 20));
    expect(acks).toEqual([]);
    echo.hold(false);
    await Promise.all([snapshot, first, second]);
    expect(acks).toEqual([7, 10, 11]);
    await transport.close();
  });

  it("rejects what is in flight when the echo server goes away, and everything once closed", async () => {
    const echo = await echoServer();
    servers.push(echo.server);
    const transport = createEchoReplicationTransport({ port: echo.port });
    echo.hold(true);
    const inFlight = transport.send({ kind: "entries", stream, fromSeq: 0, entries: [1] });
    await expect.poll(() => echo.received()).toBe(1);
    for (const s of echo.sockets) s.destroy();
    await expect(inFlight).rejects.toThrow(/echo server at port \d+ closed the connection/);
    await transport.close();
    await expect(transport.send({ kind: "entries", stream, fromSeq: 1, entries: [2] })).rejects.toThrow(/replication transport is closed/);
  });
});
