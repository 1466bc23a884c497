import { LeaseholdError } from "@leasehold/protocol";
import { describe, expect, it } from "vitest";
import { ClusterLockService } from "../../src/cluster/cluster-lock-service.js";
import type { ClusterRuntime } from "../../src/cluster/cluster-runtime.js";
import type { Coordinator, ShardLease } from "../../src/cluster/coordinator.js";

/**
 * PROTOCOL.md "Cluster mode": a `421 NOT_LEADER` omits `leaderUrl` while this server's last read
 * of the leadership is older than a leader lease, exactly as `GET /v1/cluster` answers `null`
 * then. A runtime of four shards, all led by server b as last read, none by this one (a).
 */
function setup() {
  const row = (shard: number): ShardLease => ({
    shard,
    holder: "b",
    url: "http://b.invalid",
    leaderId: "b-term",
    incarnation: "b-inc",
    epoch: 3,
    version: 7,
    expired: false,
    transitions: 3,
    standbyId: null,
    standbyIncarnation: null,
    inSync: false,
  });
  const runtime = {
    shards: 4,
    terms: [null, null, null, null],
    leases: [0, 1, 2, 3].map(row),
    leasesFresh: true,
    coordinatorDown: null as string | null,
    retryAfterMs: 100,
    url: "http://a.invalid",
    identity: { isOwn: () => false },
    onTermEnded: null as unknown,
    stop: () => Promise.resolve(),
  };
  const coordinator = { close: () => Promise.resolve() } as unknown as Coordinator;
  const service = new ClusterLockService(runtime as unknown as ClusterRuntime, coordinator, { serverId: "a", version: "test" });
  return { runtime, service };
}

async function refusal(answer: Promise<unknown>): Promise<{ code: string; details: unknown }> {
  const err = await answer.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(err instanceof LeaseholdError)) throw new Error(`expected a refusal, got ${String(err)}`);
  return { code: err.code, details: err.details };
}

const lockX = { locks: [{ descriptor: "x", mode: "exclusive" as const }] };

describe("421 NOT_LEADER names a leader only while the view is fresh", () => {
  it("a fresh view names the leader in the 421 and in /v1/cluster", async () => {
    const { service } = setup();
    expect(await refusal(service.lock("ns", lockX))).toEqual({ code: "NOT_LEADER", details: { shard: expect.any(Number), leaderUrl: "http://b.invalid" } });
    expect(service.cluster().leaders.every((l) => l.leaderUrl === "http://b.invalid")).toBe(true);
  });

  it("a server cut off from PostgreSQL (its last read older than a leader lease): /v1/cluster names no leader, and neither does the 421", async () => {
    const { service, runtime } = setup();
    runtime.leasesFresh = false;
    runtime.coordinatorDown = "connection refused";
    expect(service.cluster().leaders.map((l) => l.leaderUrl)).toEqual([null, null, null, null]);
    for (const answer of [service.lock("ns", lockX), service.refresh("ns", { tokens: ["t"] }), service.timestamps("ns", { count: 1 })]) {
      const r = await refusal(answer);
      expect(r.code).toBe("NOT_LEADER");
      expect(r.details).not.toHaveProperty("leaderUrl");
    }
  });

  it("a stopping server with a stale view names no leader either (it answers that it is shutting down)", async () => {
    const { service, runtime } = setup();
    void service.close();
    runtime.leasesFresh = false;
    const r = await refusal(service.lock("ns", lockX));
    expect(r.details ?? {}).not.toHaveProperty("leaderUrl");
    expect(r.code).toBe("UNAVAILABLE");
    runtime.leasesFresh = true;
    expect(await refusal(service.lock("ns", lockX))).toMatchObject({ code: "NOT_LEADER", details: { leaderUrl: "http://b.invalid" } });
  });
});
