import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { responseValidators, type ClusterMember, type ClusterMembersResponse } from "@leasehold/protocol";
import { afterEach, describe, expect, it } from "vitest";
import { startServer, type RunningServer } from "../../src/start-server.js";
import { startCli, type CliProcess } from "../support/cli-process.js";
import { errorOf, rawRequest } from "../support/raw-request.js";
import { sleep } from "../support/wait-for.js";
import { clusterOf, ledBy, settled } from "./cluster-support.js";
import { schemaPerTest, type Closable } from "./pg-schema.js";
import { cliSchemaPerTest } from "./cli-schema-per-test.js";

const SHARDS = 6;

async function membersOf(url: string, path = "/v1/cluster/members"): Promise<ClusterMembersResponse> {
  const res = await rawRequest(url, path, { method: "GET" });
  expect(res.status, res.text).toBe(200);
  expect(responseValidators["cluster-members"].check(res.json), res.text).toBe(true);
  return res.json as ClusterMembersResponse;
}

const byId = (answer: ClusterMembersResponse, serverId: string): ClusterMember | undefined => answer.members.find((m) => m.serverId === serverId);

/** Poll the members route until `done` holds (the answer is cached 1.5 s, so this polls gently). */
async function membersUntil(url: string, done: (a: ClusterMembersResponse) => boolean, what: string, timeoutMs = 20_000): Promise<ClusterMembersResponse> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const answer = await membersOf(url);
    if (done(answer)) return answer;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms; last answer ${JSON.stringify(answer)}`);
    await sleep(300);
  }
}

describe("GET /v1/cluster/members over three CLI servers, one killed", { timeout: 90_000 }, () => {
  const bed = cliSchemaPerTest();
  const running = bed.running;
  const start = async (): Promise<CliProcess> => {
    const server = await startCli(["--port", "0", "--cluster", bed.schema.connectionString, "--leader-lease-ms", "1000", "--shards", String(SHARDS), "--lease-ms", "1000"]);
    running.push(server);
    return server;
  };

  it("every server shows every shard's leader and every member answering; a SIGKILLed one turns not answering and stays listed", async () => {
    const servers = [await start(), await start(), await start()];
    const urls = servers.map((s) => s.url);
    const map = await settled(urls, 30_000, (m) => urls.every((u) => ledBy(m, u) === SHARDS / 3));
    const ids = await Promise.all(urls.map(async (u) => (await clusterOf(u)).serverId));

    for (const [i, url] of urls.entries()) {
      const answer = await membersUntil(url, (a) => a.members.length === 3 && a.members.every((m) => m.answering && m.ready), `all answering, seen from ${url}`);
      expect(answer.serverId).toBe(ids[i]);
      expect(answer.shards).toBe(SHARDS);
      expect(answer.members.map((m) => m.serverId)).toEqual([...ids].sort());
      expect(answer.members.filter((m) => m.self).map((m) => m.serverId)).toEqual([ids[i]]);
      for (const [j, id] of ids.entries()) {
        const member = byId(answer, id)!;
        expect(member.url).toBe(urls[j]);
        expect(member.shardsLed).toBe(SHARDS / 3);
        expect(member.heartbeatAgeMs).not.toBeNull();
        expect(member.lastAnswerAgeMs).not.toBeNull();
        expect(member.problem).toBeUndefined();
      }
      // The shard view is /v1/cluster's, with the leader's server id beside its URL.
      expect(answer.leaders.map((l) => ({ shard: l.shard, leaderUrl: l.leaderUrl, epoch: l.epoch }))).toEqual(map.leaders.map((l) => ({ shard: l.shard, leaderUrl: l.leaderUrl, epoch: l.epoch })));
      for (const l of answer.leaders) {
        expect(l.leaderServerId).toBe(ids[urls.indexOf(l.leaderUrl!)]);
        // With --replicas 1 (the default) a standby is another server (cluster-protected.test.ts checks them in sync).
        if (l.standby !== null) expect(l.standby.serverId).not.toBe(l.leaderServerId);
      }
    }

    const [a, , c] = servers as [CliProcess, CliProcess, CliProcess];
    const killedId = ids[2]!;
    c.child.kill("SIGKILL");
    await c.exited;
    const seen = await membersUntil(a.url, (x) => byId(x, killedId)?.answering === false, "the killed server shows as not answering");
    const dead = byId(seen, killedId)!;
    expect(dead.url).toBe(c.url);
    expect(dead.problem).toMatch(/connection refused|no answer/);
    // It answered earlier probes of this server: when it was last seen is known.
    expect(dead.lastAnswerAgeMs).not.toBeNull();
    expect(seen.members.filter((m) => m.answering).map((m) => m.serverId).sort()).toEqual([ids[0], ids[1]].sort());
    // Its shards are taken over by the survivors; the killed server stays listed, leading nothing,
    // its heartbeat ageing.
    const after = await membersUntil(a.url, (x) => x.leaders.every((l) => l.leaderServerId !== null && l.leaderServerId !== killedId), "the survivors lead every shard");
    expect(byId(after, killedId)?.shardsLed).toBe(0);
    expect(byId(after, killedId)!.heartbeatAgeMs!).toBeGreaterThan(1_000);
    expect(after.members.find((m) => m.serverId === ids[0])!.shardsLed + after.members.find((m) => m.serverId === ids[1])!.shardsLed).toBe(SHARDS);
  });

  it("refuses query parameters and other methods, changing nothing", async () => {
    const server = await start();
    const unknown = await rawRequest(server.url, "/v1/cluster/members?verbose=1", { method: "GET" });
    expect(unknown.status).toBe(400);
    expect(errorOf(unknown)).toMatchObject({ code: "INVALID_ARGUMENT", details: { path: "query.verbose" } });
    expect(errorOf(unknown).message).toContain("verbose");
    const posted = await rawRequest(server.url, "/v1/cluster/members", { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    expect(posted.status).toBe(405);
    expect(posted.headers.allow).toBe("GET");
  });
});

describe("GET /v1/cluster/members probes each member at most once per period, only while asked", { timeout: 60_000 }, () => {
  const bed = schemaPerTest<Closable>();
  let peers: Server[] = [];
  afterEach(async () => {
    await Promise.all(peers.map((p) => new Promise((r) => p.close(r))));
    peers = [];
  });

  /** An HTTP server answering `GET /v1/health` as `serverId`, counting the probes. */
  async function fakeMember(serverId: string): Promise<{ url: string; probes: () => number }> {
    let probes = 0;
    const peer = createServer((req, res) => {
      if (req.url === "/v1/health") probes++;
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ status: "ok", leaderId: "x", version: "0", serverId }));
    });
    peers.push(peer);
    await new Promise<void>((r) => peer.listen(0, "127.0.0.1", r));
    return { url: `http://127.0.0.1:${(peer.address() as AddressInfo).port}`, probes: () => probes };
  }

  it("concurrent polls share one probe; nothing is probed between polls; a member answering as another server is not answering", async () => {
    const server: RunningServer = await startServer({ cluster: { connectionString: bed.schema.connectionString, leaderLeaseMs: 600, shards: 2 } });
    bed.open.push(server);
    await settled([server.url], 15_000);
    const fake = await fakeMember("fake-member");
    const impostor = await fakeMember("someone-else");
    // Rows as a member's heartbeat writes them; not ready, so no share of shards is set aside for them.
    const insert = "INSERT INTO members (server_id, url, heartbeat_at, ready, incarnation) VALUES ($1, $2, clock_timestamp(), false, 'test')";
    await bed.schema.query(insert, ["fake-member", fake.url]);
    await bed.schema.query(insert, ["impostor-member", impostor.url]);
    // A row whose last heartbeat is older than the 15 minutes a member is listed for.
    await bed.schema.query("INSERT INTO members (server_id, url, heartbeat_at, ready, incarnation) VALUES ('long-gone', 'http://127.0.0.1:9', clock_timestamp() - interval '16 minutes', false, 'old')");

    const answers = await Promise.all(Array.from({ length: 20 }, () => membersOf(server.url)));
    expect(fake.probes()).toBe(1);
    expect(impostor.probes()).toBe(1);
    for (const answer of answers) {
      expect(byId(answer, "long-gone")).toBeUndefined();
      expect(answer.members.map((m) => m.serverId).sort()).toEqual(["fake-member", "impostor-member", answer.serverId].sort());
      expect(byId(answer, "fake-member")).toMatchObject({ answering: true, ready: false, self: false, shardsLed: 0 });
      expect(byId(answer, "impostor-member")).toMatchObject({ answering: false, lastAnswerAgeMs: null });
      expect(byId(answer, "impostor-member")!.problem).toContain("someone-else");
    }
    // Nobody asks for a while: no probe runs by itself.
    await sleep(3_500);
    expect(fake.probes()).toBe(1);
    // The next poll after the period probes again.
    await membersOf(server.url);
    expect(fake.probes()).toBe(2);
  });
});
