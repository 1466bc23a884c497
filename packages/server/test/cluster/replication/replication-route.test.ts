import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { request } from "undici";
import { afterEach, describe, expect, it } from "vitest";
import { capturedLogger } from "../../support/captured-logger.js";
import { recordingStandbyStore } from "./shard-replication-fixture.js";
import type { Coordinator } from "../../../src/cluster/coordinator.js";
import { createPostgresCoordinator } from "../../../src/cluster/postgres/postgres-coordinator.js";
import { CLUSTER_AUTH_HEADER, newClusterKey, signRequest } from "../../../src/cluster/replication/cluster-key.js";
import { createHttpReplicationTransport } from "../../../src/cluster/replication/http-replication-transport.js";
import { createReplicationRoute } from "../../../src/cluster/replication/replication-route.js";
import { replicationPath, ReplicationRefusal, type ReplicationMessage } from "../../../src/cluster/replication/replication-wire.js";
import { schemaPerTest } from "../pg-schema.js";

const snapshot: ReplicationMessage = {
  kind: "snapshot",
  stream: { shard: 1, epoch: 3, leaderId: "L3", leaderIncarnation: "leader-inc", standbyIncarnation: "standby-inc", streamId: "s1" },
  seq: 4,
  snapshot: ["held"],
};

/** A standby's replication route on a real socket, with the cluster key PostgreSQL holds. */
async function standby(key: Buffer) {
  const { logger, lines } = capturedLogger();
  const { store, applied } = recordingStandbyStore();
  const route = createReplicationRoute({ key: () => key, store, logger });
  const server = createServer((req, res) => {
    if (!route(req, res)) res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { server, url, store, applied, refusals: () => lines.filter((l) => l.msg === "replication request refused: not signed with the cluster key") };
}

describe("the replication route, over a real socket, with the cluster key from PostgreSQL", () => {
  const bed = schemaPerTest<Coordinator>();
  const servers: Server[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
  });

  async function setup() {
    const c = createPostgresCoordinator({ connectionString: bed.schema.connectionString });
    bed.open.push(c);
    await c.start(4);
    const key = await c.readClusterKey();
    const s = await standby(key);
    servers.push(s.server);
    return { key, ...s };
  }

  const post = (url: string, headers: Record<string, string>, body = Buffer.from(JSON.stringify(snapshot))) =>
    request(`${url}${replicationPath(1)}`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body });

  it("refuses a request without the key, with a wrong key, or with a client bearer token: 401, a log line, nothing applied", async () => {
    const { url, store, applied, refusals } = await setup();
    const body = Buffer.from(JSON.stringify(snapshot));
    const attempts: [string, Record<string, string>][] = [
      ["missing", {}],
      ["signature", { [CLUSTER_AUTH_HEADER]: signRequest(newClusterKey(), { method: "POST", path: replicationPath(1), body }) }],
      ["missing", { authorization: "Bearer client-token-with-every-scope" }],
      ["malformed", { [CLUSTER_AUTH_HEADER]: "Bearer client-token-with-every-scope" }],
    ];
    for (const [reason, headers] of attempts) {
      const answer = await post(url, headers, body);
      expect(answer.statusCode).toBe(401);
      expect(((await answer.body.json()) as { error: { code: string } }).error.code).toBe("UNAUTHENTICATED");
      expect(refusals().map((l) => l.reason)).toContain(reason);
    }
    expect(refusals().length).toBe(attempts.length);
    expect(refusals().find((l) => l.bearerToken === true && l.reason === "missing")).toBeDefined();
    expect(store.get(1)).toBeUndefined();
    expect(applied).toEqual([]);
  });

  it("refuses a body other than the one signed, and a signature made for another shard's path", async () => {
    const { url, key, store } = await setup();
    const body = Buffer.from(JSON.stringify(snapshot));
    const other = Buffer.from(JSON.stringify({ ...snapshot, seq: 99 }));
    const swapped = await post(url, { [CLUSTER_AUTH_HEADER]: signRequest(key, { method: "POST", path: replicationPath(1), body }) }, other);
    expect(swapped.statusCode).toBe(401);
    await swapped.body.dump();
    const elsewhere = await post(url, { [CLUSTER_AUTH_HEADER]: signRequest(key, { method: "POST", path: replicationPath(2), body }) }, body);
    expect(elsewhere.statusCode).toBe(401);
    await elsewhere.body.dump();
    expect(store.get(1)).toBeUndefined();
  });

  it("accepts a member's signed stream: the snapshot and entries apply and are acknowledged; a stale epoch is refused with a clear error", async () => {
    const { url, key, store, applied } = await setup();
    const transport = createHttpReplicationTransport({ url, key });
    try {
      expect(await transport.send(snapshot)).toEqual({ ackedSeq: 4 });
      expect(await transport.send({ kind: "entries", stream: snapshot.stream, fromSeq: 4, entries: ["e5", "e6"] })).toEqual({ ackedSeq: 6 });
      expect(applied).toEqual([["held"], "e5", "e6"]);
      expect(store.get(1)?.appliedSeq).toBe(6);
      const stale = await transport.send({ ...snapshot, stream: { ...snapshot.stream, epoch: 2 } }).catch((e: unknown) => e);
      expect(stale).toBeInstanceOf(ReplicationRefusal);
      expect((stale as ReplicationRefusal).code).toBe("STALE_EPOCH");
      expect((stale as ReplicationRefusal).message).toMatch(/epoch 2 is stale/);
      const restarted = await transport.send({ ...snapshot, stream: { ...snapshot.stream, standbyIncarnation: "before-restart" } }).catch((e: unknown) => e);
      expect((restarted as ReplicationRefusal).code).toBe("STANDBY_RESTARTED");
      expect(store.get(1)?.appliedSeq).toBe(6);
    } finally {
      await transport.close();
    }
  });

  it("a malformed message from a member is a 400 naming the field, never a 500, and changes nothing", async () => {
    const { url, key, store } = await setup();
    const body = Buffer.from(JSON.stringify({ ...snapshot, seq: -1 }));
    const answer = await post(url, { [CLUSTER_AUTH_HEADER]: signRequest(key, { method: "POST", path: replicationPath(1), body }) }, body);
    expect(answer.statusCode).toBe(400);
    expect(((await answer.body.json()) as { error: { message: string } }).error.message).toMatch(/seq must be a non-negative integer/);
    expect(store.get(1)).toBeUndefined();
  });
});
