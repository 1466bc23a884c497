import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { LeaseholdError, responseValidators, type ClusterMembersResponse } from "@leasehold/protocol";
import { afterEach, describe, expect, it } from "vitest";
import type { ShardLeader } from "../../src/cluster/shard-leaders.js";
import { ClusterMembersView, type ClusterMembersSource } from "../../src/cluster/cluster-members-view.js";
import type { MemberRow } from "../../src/cluster/coordinator.js";
import { HealthProber } from "../../src/cluster/health-prober.js";

const SELF = "self-1";

describe("ClusterMembersView: what the members route answers when the table, the shard view or a member misbehaves", () => {
  const closers: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    await Promise.all(closers.splice(0).map((close) => close()));
  });

  /**
   * A member answering `GET /v1/health` as `serverId` under `prefix` (a server behind a
   * path-prefixing proxy), and `GET /v1/cluster` with `answers.cluster` when given.
   */
  async function member(serverId: string, prefix = "", answers: { health?: object; cluster?: object } = {}): Promise<string> {
    const server: Server = createServer((req, res) => {
      const body = req.url === `${prefix}/v1/health` ? { status: "ok", leaderId: "x", version: "0", serverId, ...answers.health } : req.url === `${prefix}/v1/cluster?lag` ? answers.cluster : undefined;
      res.writeHead(body !== undefined ? 200 : 404, { "content-type": "application/json" });
      res.end(JSON.stringify(body ?? { error: { code: "NOT_FOUND", message: "no", details: {} } }));
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    closers.push(() => new Promise((r) => server.close(r)));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}${prefix}`;
  }

  function view(over: Partial<ClusterMembersSource>): ClusterMembersView {
    const prober = new HealthProber({ timeoutMs: 2_000 });
    closers.push(() => prober.close());
    const leaders: ShardLeader[] = [{ shard: 0, serverId: SELF, url: "http://self", leaderId: "t", epoch: 2, standby: null }];
    return new ClusterMembersView({ serverId: SELF, url: () => "http://self", shardLeaders: () => leaders, readMembers: async () => [], prober, ...over }, { cacheMs: 0 });
  }

  const checked = (answer: ClusterMembersResponse): ClusterMembersResponse => {
    expect(responseValidators["cluster-members"].check(answer), JSON.stringify(answer)).toBe(true);
    return answer;
  };

  it("shows the last members read, with the error, when the member table cannot be read; probes go on", async () => {
    const other = await member("other-1", "/lh");
    const rows: MemberRow[] = [
      { serverId: "other-1", url: other, ready: true, heartbeatAgeMs: 300 },
      { serverId: SELF, url: "http://self", ready: true, heartbeatAgeMs: 100 },
    ];
    let fail = false;
    const v = view({
      readMembers: async () => {
        if (fail) throw new Error("Connection terminated unexpectedly");
        return rows;
      },
    });
    const first = checked(await v.answer());
    expect(first.memberListError).toBeUndefined();
    // Probed under the URL's own path prefix.
    expect(first.members.find((m) => m.serverId === "other-1")).toMatchObject({ answering: true, self: false, shardsLed: 0 });
    expect(first.members.find((m) => m.serverId === SELF)).toMatchObject({ answering: true, self: true, lastAnswerAgeMs: 0, shardsLed: 1 });

    fail = true;
    const second = checked(await v.answer());
    expect(second.memberListError).toContain("cannot read the member table: Connection terminated unexpectedly");
    expect(second.members.map((m) => m.serverId)).toEqual(["other-1", SELF]);
    expect(second.members[0]!.answering).toBe(true);
    // The ages go on from when the rows were read, never back.
    expect(second.members[0]!.heartbeatAgeMs!).toBeGreaterThanOrEqual(300);
  });

  it("lists this server without a heartbeat when it has no row yet, and passes a shard's standby on", async () => {
    const standby = { serverId: "other-2", url: "http://other-2", inSync: true, lagEntries: 3, lagMs: 2 };
    const protection = { shardsLed: 0, shardsLedInSync: 0, standbyFor: 0, standbyForInSync: 0, protected: true };
    const v = view({ shardLeaders: () => [{ shard: 0, serverId: null, url: null, leaderId: null, epoch: 0, standby }], protection: () => protection });
    const answer = checked(await v.answer());
    expect(answer.members).toEqual([{ serverId: SELF, url: "http://self", self: true, ready: false, heartbeatAgeMs: null, answering: true, lastAnswerAgeMs: 0, shardsLed: 0, cluster: protection }]);
    expect(answer.leaders).toEqual([{ shard: 0, leaderServerId: null, leaderUrl: null, epoch: 0, standby }]);
  });

  it("each member's protection comes from its health; another leader's standby lag from its cluster view, only for the same standby and epoch", async () => {
    const theirs = { shardsLed: 2, shardsLedInSync: 1, standbyFor: 1, standbyForInSync: 1, protected: false };
    const leaderEntry = (shard: number, epoch: number, standby: object | null) => ({ shard, leaderUrl: "http://x", leaderId: "t", epoch, standby });
    const cluster = {
      serverId: "other-1",
      shards: 3,
      leaders: [leaderEntry(0, 2, null), leaderEntry(1, 5, { serverId: SELF, inSync: true, lagEntries: 4, lagMs: 17 }), leaderEntry(2, 9, { serverId: SELF, inSync: false, lagEntries: 0, lagMs: 0 })],
    };
    const other = await member("other-1", "", { health: { cluster: theirs }, cluster });
    const row = (shard: number, epoch: number): ShardLeader => ({ shard, serverId: "other-1", url: other, leaderId: "t", epoch, standby: { serverId: SELF, url: null, inSync: true } });
    const v = view({
      readMembers: async () => [
        { serverId: "other-1", url: other, ready: true, heartbeatAgeMs: 0 },
        { serverId: SELF, url: "http://self", ready: true, heartbeatAgeMs: 0 },
      ],
      // Shard 2: this server's read of the row is older than the leader's view (epoch 8 < 9).
      shardLeaders: () => [{ shard: 0, serverId: SELF, url: "http://self", leaderId: "u", epoch: 2, standby: { serverId: "other-1", url: other, inSync: false, lagEntries: 0, lagMs: 0 } }, row(1, 5), row(2, 8)],
    });
    const answer = checked(await v.answer());
    expect(answer.members.find((m) => m.serverId === "other-1")?.cluster).toEqual(theirs);
    expect(answer.leaders.map((l) => l.standby)).toEqual([
      { serverId: "other-1", url: other, inSync: false, lagEntries: 0, lagMs: 0 },
      { serverId: SELF, url: "http://self", inSync: true, lagEntries: 4, lagMs: 17 },
      { serverId: SELF, url: "http://self", inSync: true, lagEntries: null, lagMs: null },
    ]);
  });

  it("before this server joined it answers the shard view's UNAVAILABLE and reads nothing", async () => {
    let reads = 0;
    const v = view({
      shardLeaders: () => {
        throw new LeaseholdError("UNAVAILABLE", "not joined yet", { retryAfterMs: 500 });
      },
      readMembers: async () => {
        reads++;
        return [];
      },
    });
    await expect(v.answer()).rejects.toMatchObject({ code: "UNAVAILABLE" });
    expect(reads).toBe(0);
  });

  it("a member that refuses connections, answers 404 or has a URL that is not http is not answering, with why", async () => {
    const wrongPath = await member("other-3", "/elsewhere");
    const closed = await member("gone");
    await closers.pop()!();
    const v = view({
      readMembers: async () => [
        { serverId: "gone", url: closed, ready: true, heartbeatAgeMs: 5_000 },
        { serverId: "other-3", url: wrongPath.replace("/elsewhere", ""), ready: true, heartbeatAgeMs: 0 },
        { serverId: "odd", url: "ftp://example", ready: false, heartbeatAgeMs: 0 },
      ],
    });
    const answer = checked(await v.answer());
    const problems = Object.fromEntries(answer.members.filter((m) => !m.self).map((m) => [m.serverId, [m.answering, m.problem, m.lastAnswerAgeMs]]));
    expect(problems).toEqual({
      gone: [false, "connection refused", null],
      "other-3": [false, "its health route answered 404", null],
      odd: [false, "its URL is not http(s)", null],
    });
  });

  it("a member that accepts the connection but never answers (paused) is not answering once the probe's timeout passes", async () => {
    const hung: Server = createServer(() => undefined);
    await new Promise<void>((r) => hung.listen(0, "127.0.0.1", r));
    closers.push(() => {
      hung.closeAllConnections();
      return new Promise((r) => hung.close(r));
    });
    const prober = new HealthProber({ timeoutMs: 300 });
    closers.push(() => prober.close());
    expect(await prober.probe("paused", `http://127.0.0.1:${(hung.address() as AddressInfo).port}`)).toEqual({ answering: false, problem: "no answer within 300 ms" });
    expect(prober.lastAnswered("paused")).toBeUndefined();
  });
});
