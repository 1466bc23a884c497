import { createServer, type IncomingMessage, type Server } from "node:http";
import { connect, type AddressInfo, type Socket } from "node:net";
import type { Duplex } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { capturedLogger } from "../../support/captured-logger.js";
import { recordingStandbyStore } from "./shard-replication-fixture.js";
import { CLUSTER_AUTH_HEADER, newClusterKey, signRequest } from "../../../src/cluster/replication/cluster-key.js";
import { createReplicationStreamRoute } from "../../../src/cluster/replication/replication-stream-route.js";
import { ReplicationRefusal, type ReplicationMessage } from "../../../src/cluster/replication/replication-wire.js";
import { FrameReader, FrameWriter, newNonce, sessionKey, STREAM_PROTOCOL, streamPath } from "../../../src/cluster/replication/stream-frames.js";
import { createStreamReplicationTransport } from "../../../src/cluster/replication/stream-replication-transport.js";

const stream = { shard: 1, epoch: 3, leaderId: "L3", leaderIncarnation: "leader-inc", standbyIncarnation: "standby-inc", streamId: "s1" };
const snapshot: ReplicationMessage = { kind: "snapshot", stream, seq: 4, snapshot: ["held"] };
const entries = (fromSeq: number, ...e: string[]): ReplicationMessage => ({ kind: "entries", stream, fromSeq, entries: e });

/** A standby's stream route on a real socket. */
async function standby(key: Buffer) {
  const { logger, lines } = capturedLogger();
  const { store, applied } = recordingStandbyStore();
  const unauthenticated: string[] = [];
  const route = createReplicationStreamRoute({ key: () => key, store, logger, onUnauthenticated: (r) => unauthenticated.push(r) });
  const server = createServer((_req, res) => res.writeHead(404).end());
  server.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => route.upgrade(req, socket, head));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return { server, route, port, url: `http://127.0.0.1:${port}`, store, applied, lines, unauthenticated };
}

/** A raw upgrade request; answers the socket and everything it received until it closed or `ms` passed. */
async function rawUpgrade(port: number, head: string, after?: (socket: Socket, answer: string) => void, ms = 300): Promise<string> {
  const socket = connect(port, "127.0.0.1");
  let answer = "";
  socket.on("data", (c: Buffer) => {
    answer += c.toString("latin1");
    after?.(socket, answer);
  });
  socket.on("error", () => undefined);
  socket.write(head);
  await new Promise<void>((resolve) => {
    socket.once("close", () => resolve());
    setTimeout(resolve, ms);
  });
  socket.destroy();
  return answer;
}

describe("the replication stream (one upgraded connection, framed and signed messages)", () => {
  const servers: Server[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
  });

  async function setup() {
    const key = newClusterKey();
    const s = await standby(key);
    servers.push(s.server);
    return { key, ...s };
  }

  it("carries many messages in flight at once, applied in order and answered in order", async () => {
    const { url, key, store, applied, route } = await setup();
    const transport = createStreamReplicationTransport({ url, shard: 1, key });
    try {
      const sends = [transport.send(snapshot), transport.send(entries(4, "e5", "e6")), transport.send(entries(6, "e7")), transport.send(entries(5, "e6", "e7", "e8"))];
      expect(await Promise.all(sends)).toEqual([{ ackedSeq: 4 }, { ackedSeq: 6 }, { ackedSeq: 7 }, { ackedSeq: 8 }]);
      // The re-sent e6 and e7 were skipped: the standby applies each entry once.
      expect(applied).toEqual([["held"], "e5", "e6", "e7", "e8"]);
      expect(store.get(1)?.appliedSeq).toBe(8);
    } finally {
      await transport.close();
      route.closeAll();
    }
  });

  it("a refusal rejects its message with the standby's code and ends the stream; the next send opens a new one", async () => {
    const { url, key, store, route } = await setup();
    const transport = createStreamReplicationTransport({ url, shard: 1, key });
    try {
      expect(await transport.send(snapshot)).toEqual({ ackedSeq: 4 });
      const stale = await transport.send({ ...snapshot, stream: { ...stream, epoch: 2 } }).catch((e: unknown) => e);
      expect(stale).toBeInstanceOf(ReplicationRefusal);
      expect((stale as ReplicationRefusal).code).toBe("STALE_EPOCH");
      expect((stale as ReplicationRefusal).message).toMatch(/epoch 2 is stale/);
      const gap = await transport.send(entries(9, "e10")).catch((e: unknown) => e);
      // Either the old connection's close or the new one's refusal; never an acknowledgement.
      if (gap instanceof ReplicationRefusal) expect(gap.code).toBe("NEEDS_SNAPSHOT");
      else expect(String(gap)).toMatch(/closed/);
      expect(await transport.send(entries(4, "e5"))).toEqual({ ackedSeq: 5 });
      expect(store.get(1)?.appliedSeq).toBe(5);
    } finally {
      await transport.close();
      route.closeAll();
    }
  });

  it("a connection that drops rejects every message in flight as an unknown outcome, and the next send reconnects", async () => {
    const { url, key, route, store } = await setup();
    const transport = createStreamReplicationTransport({ url, shard: 1, key });
    try {
      expect(await transport.send(snapshot)).toEqual({ ackedSeq: 4 });
      route.closeAll();
      const lost = await transport.send(entries(4, "e5")).catch((e: unknown) => e);
      expect(lost).toBeInstanceOf(Error);
      expect(lost).not.toBeInstanceOf(ReplicationRefusal);
      let answered: unknown = null;
      for (let i = 0; i < 3 && answered === null; i++) answered = await transport.send(entries(4, "e5")).catch(() => null);
      expect(answered).toEqual({ ackedSeq: 5 });
      expect(store.get(1)?.appliedSeq).toBe(5);
    } finally {
      await transport.close();
      route.closeAll();
    }
  });

  it("refuses an upgrade without the key, with a wrong key, or with a client bearer token: 401, a log line, a count, nothing applied", async () => {
    const { port, store, lines, unauthenticated } = await setup();
    const path = streamPath(1, newNonce());
    const upgrade = (headers: string) => `GET ${path} HTTP/1.1\r\nhost: x\r\nconnection: Upgrade\r\nupgrade: ${STREAM_PROTOCOL}\r\n${headers}\r\n`;
    const wrong = signRequest(newClusterKey(), { method: "GET", path, body: Buffer.alloc(0) });
    for (const headers of ["", `${CLUSTER_AUTH_HEADER}: ${wrong}\r\n`, "authorization: Bearer client-token-with-every-scope\r\n"]) {
      const answer = await rawUpgrade(port, upgrade(headers));
      expect(answer).toMatch(/^HTTP\/1\.1 401 /);
      expect(answer).toMatch(/"code":"UNAUTHENTICATED"/);
    }
    expect(unauthenticated).toEqual(["missing", "signature", "missing"]);
    expect(lines.filter((l) => l.msg === "replication request refused: not signed with the cluster key").length).toBeGreaterThanOrEqual(2);
    expect(store.get(1)).toBeUndefined();
  });

  it("a replayed upgrade gets a session its sender cannot sign for: its frames close the stream and apply nothing", async () => {
    const { port, key, store, applied, lines } = await setup();
    const path = streamPath(1, newNonce());
    // A signed upgrade, as a member sent it and an eavesdropper captured it.
    const signed = signRequest(key, { method: "GET", path, body: Buffer.alloc(0) });
    const head = `GET ${path} HTTP/1.1\r\nhost: x\r\nconnection: Upgrade\r\nupgrade: ${STREAM_PROTOCOL}\r\n${CLUSTER_AUTH_HEADER}: ${signed}\r\n\r\n`;
    // Without the cluster key the replayer can only guess a session key: here, one made from another key.
    const guessed = new FrameWriter(sessionKey(newClusterKey(), path, "0".repeat(32), "0".repeat(32)), "to-standby");
    let sent = false;
    const answer = await rawUpgrade(port, head, (socket, received) => {
      if (!sent && received.includes("\r\n\r\n")) {
        sent = true;
        socket.write(guessed.frame(snapshot));
      }
    });
    expect(answer).toMatch(/^HTTP\/1\.1 101 /);
    expect(store.get(1)).toBeUndefined();
    expect(applied).toEqual([]);
    expect(lines.some((l) => l.msg === "replication stream closed: a frame failed its check")).toBe(true);
  });

  it("frames are numbered: a member's frame sent twice (a replay within the stream) closes it", async () => {
    const { port, key, store } = await setup();
    const leaderNonce = newNonce();
    const path = streamPath(1, leaderNonce);
    const signed = signRequest(key, { method: "GET", path, body: Buffer.alloc(0) });
    const head = `GET ${path} HTTP/1.1\r\nhost: x\r\nconnection: Upgrade\r\nupgrade: ${STREAM_PROTOCOL}\r\n${CLUSTER_AUTH_HEADER}: ${signed}\r\n\r\n`;
    let sent = false;
    let answers: unknown[] = [];
    let reader: FrameReader | null = null;
    const answer = await rawUpgrade(port, head, (socket, received) => {
      const end = received.indexOf("\r\n\r\n");
      if (sent || end < 0) return;
      sent = true;
      const nonce = /x-leasehold-stream-nonce: ([0-9a-f]{32})/.exec(received)![1]!;
      const k = sessionKey(key, path, leaderNonce, nonce);
      reader = new FrameReader(k, "to-leader", 1 << 20);
      socket.on("data", (c: Buffer) => (answers = answers.concat(reader!.push(c))));
      const frame = new FrameWriter(k, "to-standby").frame(snapshot);
      socket.write(Buffer.concat([frame, frame]));
    });
    expect(answer).toMatch(/^HTTP\/1\.1 101 /);
    // The first copy applied and was answered; the second failed its MAC (frame 1 signed as frame 0).
    expect(store.get(1)?.appliedSeq).toBe(4);
    // One answer frame per read: the acknowledgements of the messages it completed, in order.
    expect(answers).toEqual([[4]]);
  });

  it("answers a malformed message on a signed stream with INVALID_ARGUMENT naming the field, and an upgrade of another path with 400", async () => {
    const { url, port, key, store, route } = await setup();
    const transport = createStreamReplicationTransport({ url, shard: 1, key });
    try {
      const bad = await transport.send({ ...snapshot, seq: -1 } as ReplicationMessage).catch((e: unknown) => e);
      expect((bad as ReplicationRefusal).code).toBe("INVALID_ARGUMENT");
      expect((bad as ReplicationRefusal).message).toMatch(/seq must be a non-negative integer/);
      expect(store.get(1)).toBeUndefined();
    } finally {
      await transport.close();
      route.closeAll();
    }
    const other = await rawUpgrade(port, `GET /v1/lock HTTP/1.1\r\nhost: x\r\nconnection: Upgrade\r\nupgrade: websocket\r\n\r\n`);
    expect(other).toMatch(/^HTTP\/1\.1 400 /);
    expect(other).toMatch(/only \/v1\/internal\/replication-stream\/\{shard\}/);
  });
});
