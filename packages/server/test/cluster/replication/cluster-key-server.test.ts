import { connect } from "node:net";
import { request } from "undici";
import { describe, expect, it } from "vitest";
import { CLUSTER_AUTH_HEADER } from "../../../src/cluster/replication/cluster-key.js";
import { createHttpReplicationTransport } from "../../../src/cluster/replication/http-replication-transport.js";
import { replicationPath, ReplicationRefusal, type ReplicationMessage } from "../../../src/cluster/replication/replication-wire.js";
import { newNonce, STREAM_PROTOCOL, streamPath } from "../../../src/cluster/replication/stream-frames.js";
import { createStreamReplicationTransport } from "../../../src/cluster/replication/stream-replication-transport.js";
import { startServer } from "../../../src/start-server.js";
import { capturedLogger } from "../../support/captured-logger.js";
import { waitFor } from "../../support/wait-for.js";
import { schemaPerTest } from "../pg-schema.js";

/** A raw upgrade to the replication stream with `headers`; answers what the server wrote before it closed. */
async function upgrade(url: string, headers: string): Promise<string> {
  const { port } = new URL(url);
  const socket = connect(Number(port), "127.0.0.1");
  let answer = "";
  socket.on("data", (c: Buffer) => (answer += c.toString("latin1")));
  socket.on("error", () => undefined);
  socket.write(`GET ${streamPath(1, newNonce())} HTTP/1.1\r\nhost: x\r\nconnection: Upgrade\r\nupgrade: ${STREAM_PROTOCOL}\r\n${headers}\r\n`);
  await new Promise<void>((resolve) => {
    socket.once("close", () => resolve());
    setTimeout(resolve, 2_000);
  });
  socket.destroy();
  return answer;
}

describe("a cluster server's replication route: only the cluster key opens it", () => {
  const bed = schemaPerTest<{ close(): Promise<unknown> }>();

  it("refuses no key and client bearer tokens (even an admin's) with 401 and a log line, changing nothing; accepts a member's signed stream", async () => {
    const { logger, lines } = capturedLogger();
    const server = await startServer({
      logger,
      auth: { "@admin": ["admin-token"], "*": ["client-token"] },
      cluster: { connectionString: bed.schema.connectionString, leaderLeaseMs: 600, shards: 2, serverId: "standby" },
    });
    bed.open.push(server);
    let row: { incarnation: string } | undefined;
    // The member row (with this process's incarnation) is written by its first heartbeat.
    for (let i = 0; i < 200 && row === undefined; i++) {
      [row] = await bed.schema.query<{ incarnation: string }>("SELECT incarnation FROM members WHERE server_id = 'standby'");
      if (row === undefined) await new Promise((r) => setTimeout(r, 25));
    }
    const [{ key }] = (await bed.schema.query<{ key: Buffer }>("SELECT key FROM cluster_key")) as [{ key: Buffer }];
    const stream = { shard: 1, epoch: 1, leaderId: "L1", leaderIncarnation: "leader-inc", standbyIncarnation: row!.incarnation, streamId: "s1" };
    const snapshot: ReplicationMessage = { kind: "snapshot", stream, seq: 0, snapshot: { namespaces: {} } };
    const body = Buffer.from(JSON.stringify(snapshot));
    const refused = () => lines.filter((l) => l.msg === "replication request refused: not signed with the cluster key");

    const attempts = [{}, { authorization: "Bearer client-token" }, { [CLUSTER_AUTH_HEADER]: "v1 t=1 sha256=00 mac=00" }, { authorization: "Bearer admin-token" }];
    for (const headers of attempts) {
      const answer = await request(`${server.url}${replicationPath(1)}`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body });
      expect(answer.statusCode).toBe(401);
      expect(((await answer.body.json()) as { error: { code: string } }).error.code).toBe("UNAUTHENTICATED");
    }
    // One line per kind of refusal (a second of one kind within a second is counted, not logged).
    expect(refused().map((l) => [l.reason, l.bearerToken])).toEqual([
      ["missing", false],
      ["missing", true],
      ["malformed", false],
    ]);
    const metrics = await request(`${server.url}/metrics`, { headers: { authorization: "Bearer admin-token" } });
    const text = await metrics.body.text();
    expect(text).toMatch(/leasehold_replication_unauthenticated_total\{reason="missing"\} 3/);
    expect(text).toMatch(/leasehold_replication_unauthenticated_total\{reason="malformed"\} 1/);

    // The replication stream (what leaders use) is opened by the cluster key alone, too.
    for (const headers of ["", "authorization: Bearer admin-token\r\n", `${CLUSTER_AUTH_HEADER}: v1 t=1 sha256=00 mac=00\r\n`]) {
      const answer = await upgrade(server.url, headers);
      expect(answer).toMatch(/^HTTP\/1\.1 401 /);
      expect(answer).toMatch(/"code":"UNAUTHENTICATED"/);
    }
    const after = await (await request(`${server.url}/metrics`, { headers: { authorization: "Bearer admin-token" } })).body.text();
    expect(after).toMatch(/leasehold_replication_unauthenticated_total\{reason="missing"\} 5/);

    // Nothing they sent was kept: the stream's entries find no snapshot.
    const transport = createHttpReplicationTransport({ url: server.url, key });
    try {
      const entries = await transport.send({ kind: "entries", stream, fromSeq: 0, entries: [] }).catch((e: unknown) => e);
      expect((entries as ReplicationRefusal).code).toBe("NEEDS_SNAPSHOT");
      // A member's signed snapshot is accepted and acknowledged.
      expect(await transport.send(snapshot)).toEqual({ ackedSeq: 0 });
    } finally {
      await transport.close();
    }
    // Over the stream as well: a member's signed upgrade, then its frames, are accepted.
    const streamed = createStreamReplicationTransport({ url: server.url, shard: 1, key });
    try {
      expect(await streamed.send({ ...snapshot, stream: { ...stream, streamId: "s2" } })).toEqual({ ackedSeq: 0 });
    } finally {
      await streamed.close();
    }
    // The client routes still work with their own credentials.
    await waitFor(() => lines.some((l) => l.msg === "joined the cluster"), "joined");
    const health = await request(`${server.url}/v1/health`, { headers: { authorization: "Bearer client-token" } });
    expect(health.statusCode).toBe(200);
    await health.body.dump();
  });
});
