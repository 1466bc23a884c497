import { createServer, type IncomingMessage, type Server } from "node:http";
import { connect, type AddressInfo } from "node:net";
import type { Duplex } from "node:stream";
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { capturedLogger } from "../../support/captured-logger.js";
import { recordingStandbyStore } from "./shard-replication-fixture.js";
import { CLUSTER_AUTH_HEADER, newClusterKey, signRequest } from "../../../src/cluster/replication/cluster-key.js";
import { FrameMac } from "../../../src/cluster/replication/frame-mac.js";
import { createReplicationStreamRoute } from "../../../src/cluster/replication/replication-stream-route.js";
import type { ReplicationMessage } from "../../../src/cluster/replication/replication-wire.js";
import { entriesAckOf } from "../../../src/cluster/replication/standby-floor.js";
import { toStandbyValue } from "../../../src/cluster/replication/stream-replication-codec.js";
import { newNonce, sessionKey, STREAM_PROTOCOL, streamPath } from "../../../src/cluster/replication/stream-frames.js";
import { createStreamReplicationTransport } from "../../../src/cluster/replication/stream-replication-transport.js";
import type { StandbyFloor } from "../../../src/cluster/test-breaks.js";

const stream = { shard: 1, epoch: 3, leaderId: "L3", leaderIncarnation: "leader-inc", standbyIncarnation: "standby-inc", streamId: "s1" };
const snapshot: ReplicationMessage = { kind: "snapshot", stream, seq: 4, snapshot: ["held"] };
const grant = (ns: string, token: string, descriptor: string) => ({
  ns,
  entry: { type: "grant", kind: "lock", token, holds: [{ descriptor, mode: "exclusive", fencingToken: 7 }], allOrNone: true, max: null, waitedMs: 0, next: 8 },
});
const release = (ns: string, token: string) => ({ ns, entry: { type: "release", token, reason: "unlock" } });
/** A waiter's entry: no compact form, it travels as an object. */
const waiting = { ns: "a", entry: { type: "waiting", serial: 3, requestId: "r", holds: [], specs: [{ descriptor: "d", mode: "exclusive" }], next: 9 } };
const entries = (fromSeq: number, ...e: unknown[]): ReplicationMessage => ({ kind: "entries", stream, fromSeq, entries: e });
/** The payload bytes the leader's codec sends for `message` after a message of the same stream. */
const continuing = (message: ReplicationMessage): Buffer => Buffer.from(JSON.stringify(toStandbyValue(message, stream)));

describe("the floor standby's acknowledgement read from a message's bytes (benchmark only)", () => {
  it("is fromSeq plus the number of compact entries, whatever the strings in them hold", () => {
    expect(entriesAckOf(continuing(entries(4, grant("a", "t1", "k1"))))).toBe(5);
    expect(entriesAckOf(continuing(entries(9, release("a", "t0"), grant("a", "t1", "k1"), release("b", "t2"))))).toBe(12);
    expect(entriesAckOf(continuing(entries(123456789, grant('[1,"', '[0,"x', '[1,"[0,"'), release('[0,"', '[1,"'))))).toBe(123456791);
    expect(entriesAckOf(continuing(entries(17)))).toBe(17);
    // A string may end in what looks like an entry's start: `[1,` then the string's closing quote.
    const tricky = { ns: "a", entry: { ...grant("a", "t1", "x[1,").entry, requestId: "r[0,", clientDescription: 'hi [0,\\"[1,' } };
    expect(entriesAckOf(continuing(entries(10, tricky)))).toBe(11);
    expect(entriesAckOf(continuing(entries(10, grant("a", "t1", "k[1,"), release("a", "t1\\"))))).toBe(12);
  });

  it("counts every list of compact entries right, for any strings in them (property)", () => {
    const text = fc.string({ unit: fc.constantFrom("a", "[", "]", "{", "}", ",", '"', "\\", "0", "1", ":", " ", "é") , maxLength: 12 });
    const entry = fc.oneof(
      fc.record({ ns: text, token: text, descriptor: text }).map(({ ns, token, descriptor }) => grant(ns, token, descriptor)),
      fc.record({ ns: text, token: text, requestId: text, clientDescription: text, descriptor: text }).map(({ ns, token, requestId, clientDescription, descriptor }) => ({
        ns,
        entry: { ...grant(ns, token, descriptor).entry, requestId, clientDescription, specs: [{ descriptor, mode: "exclusive" }] },
      })),
      fc.record({ ns: text, token: text }).map(({ ns, token }) => release(ns, token)),
    );
    fc.assert(
      fc.property(fc.nat({ max: 1_000_000 }), fc.array(entry, { maxLength: 6 }), (fromSeq, list) => {
        expect(entriesAckOf(continuing(entries(fromSeq, ...list)))).toBe(fromSeq + list.length);
        expect(entriesAckOf(continuing(entries(fromSeq, ...list, waiting)))).toBeNull();
      }),
      { numRuns: 500 },
    );
  });

  it("is null for anything else, which the floor decodes: a message naming its stream, an entry in object form, a snapshot, bytes that are not the codec's", () => {
    expect(entriesAckOf(Buffer.from(JSON.stringify(toStandbyValue(entries(4, grant("a", "t1", "k1")), null))))).toBeNull();
    expect(entriesAckOf(continuing(entries(4, grant("a", "t1", "k1"), waiting)))).toBeNull();
    // A hand-over entry is an object without a namespace.
    expect(entriesAckOf(continuing(entries(4, grant("a", "t1", "k1"), { handOver: true })))).toBeNull();
    expect(entriesAckOf(Buffer.from(JSON.stringify(toStandbyValue(snapshot, stream))))).toBeNull();
    for (const junk of ['{"kind":"entries","fromSeq":,"entries":[]}', '{"kind":"entries","fromSeq":4', '{"kind":"entries","fromSeq":4,"entries"', "", "[]"]) {
      expect(entriesAckOf(Buffer.from(junk)), junk).toBeNull();
    }
  });
});

describe("a standby stream route in a floor mode (LEASEHOLD_TEST_STANDBY_FLOOR)", () => {
  const servers: Server[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
  });

  it("auth: a signed frame that is not JSON closes the stream unanswered, as the frame reader's own failures do", async () => {
    const key = newClusterKey();
    const { logger, lines } = capturedLogger();
    const { store, applied } = recordingStandbyStore();
    const route = createReplicationStreamRoute({ key: () => key, store, logger, unsafeFloor: "auth" });
    const server = createServer((_req, res) => res.writeHead(404).end());
    server.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => route.upgrade(req, socket, head));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    servers.push(server);
    const leaderNonce = newNonce();
    const path = streamPath(1, leaderNonce);
    const socket = connect((server.address() as AddressInfo).port, "127.0.0.1");
    let received = Buffer.alloc(0);
    let sent = false;
    socket.on("data", (c: Buffer) => {
      received = Buffer.concat([received, c]);
      const text = received.toString("latin1");
      if (sent || !text.includes("\r\n\r\n")) return;
      sent = true;
      const k = sessionKey(key, path, leaderNonce, /x-leasehold-stream-nonce: ([0-9a-f]{32})/.exec(text)![1]!);
      const payload = Buffer.from("not json");
      const frame = Buffer.alloc(36 + payload.length);
      payload.copy(frame, 36);
      frame.writeUInt32BE(32 + payload.length, 0);
      // Frame 0 of the leader's direction (1), signed with the session key.
      frame.write(new FrameMac(k).of(1, 0, frame, 36, frame.length), 4, "latin1");
      received = Buffer.alloc(0);
      socket.write(frame);
    });
    socket.on("error", () => undefined);
    const signed = signRequest(key, { method: "GET", path, body: Buffer.alloc(0) });
    socket.write(`GET ${path} HTTP/1.1\r\nhost: x\r\nconnection: Upgrade\r\nupgrade: ${STREAM_PROTOCOL}\r\n${CLUSTER_AUTH_HEADER}: ${signed}\r\n\r\n`);
    await new Promise<void>((resolve) => socket.once("close", () => resolve()));
    expect(sent).toBe(true);
    expect(received.length).toBe(0);
    expect(applied).toEqual([]);
    expect(lines.some((l) => l.msg === "replication stream closed: a frame failed its check" && l.reason === "a frame is not JSON")).toBe(true);
    route.closeAll();
  });

  for (const floor of ["auth", "decode"] as const satisfies readonly StandbyFloor[]) {
    it(`${floor}: restores the snapshot, then answers each entries message with its last sequence number and applies none of it`, async () => {
      const key = newClusterKey();
      const { logger } = capturedLogger();
      const { store, applied } = recordingStandbyStore();
      const route = createReplicationStreamRoute({ key: () => key, store, logger, unsafeFloor: floor });
      const server = createServer((_req, res) => res.writeHead(404).end());
      server.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => route.upgrade(req, socket, head));
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      servers.push(server);
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const transport = createStreamReplicationTransport({ url, shard: 1, key });
      try {
        const sends = [
          transport.send(snapshot),
          transport.send(entries(4, grant("a", "t5", "k"), release("a", "t5"))),
          transport.send(entries(6, grant("a", "t7", "k"), waiting)),
          transport.send(entries(8, release("a", "t7"))),
        ];
        expect(await Promise.all(sends)).toEqual([{ ackedSeq: 4 }, { ackedSeq: 6 }, { ackedSeq: 8 }, { ackedSeq: 9 }]);
        expect(applied).toEqual([["held"]]);
        expect(store.get(1)?.appliedSeq).toBe(4);
      } finally {
        await transport.close();
        route.closeAll();
      }
    });
  }
});
