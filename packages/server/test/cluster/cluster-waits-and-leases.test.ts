import type { LockResponse, TimestampLeaseResponse } from "@leasehold/protocol";
import { describe, expect, it } from "vitest";
import { startServer, type RunningServer } from "../../src/start-server.js";
import { sleep } from "../support/wait-for.js";
import { ledBy, namespaceLedBy, op, settled } from "./cluster-support.js";
import { schemaPerTest } from "./pg-schema.js";

// As cluster-servers.test.ts: leases long enough that leadership holds still on a loaded CI machine.
const LEADER_LEASE_MS = 1_500;
const LEASE_MS = 2_000;
const ex = (descriptor: string) => ({ descriptor, mode: "exclusive" as const });

describe("cluster: wait-for-locks and timestamp leases on the leader, across a hand-over without the table", () => {
  const bed = schemaPerTest<RunningServer>();
  const servers = bed.open;
  const start = async (): Promise<RunningServer> => {
    const server = await startServer({ leaseMs: LEASE_MS, cluster: { connectionString: bed.schema.connectionString, leaderLeaseMs: LEADER_LEASE_MS, shards: 4 } });
    servers.push(server);
    return server;
  };

  it("a non-leader answers 421; a new leader's minLeased is never above a timestamp the old leader's lease may still hold", async () => {
    const a = await start();
    const b = await start();
    const map = await settled([a.url, b.url], 10_000, (m) => ledBy(m, a.url) === 2 && ledBy(m, b.url) === 2);
    const ns = namespaceLedBy(map, a.url);
    const lease = await op(a.url, ns, "timestamp-leases", { name: "compaction", count: 0 });
    expect(lease.status).toBe(200);
    const honoured = (lease.json as TimestampLeaseResponse).leased;
    for (const [operation, body] of [
      ["timestamp-leases/min", { name: "compaction" }],
      ["wait-for-locks", { locks: [ex("d")] }],
    ] as const) {
      const refused = await op(b.url, ns, operation, body);
      expect(refused.status).toBe(421);
      expect(refused.json).toMatchObject({ error: { code: "NOT_LEADER", details: { leaderUrl: a.url } } });
    }
    await op(a.url, ns, "timestamps", { count: 500 });
    // Let a renewal round record it, then hand over (no standby: b starts with an empty table).
    await sleep(LEADER_LEASE_MS);
    await a.close();
    let min = await op(b.url, ns, "timestamp-leases/min", { name: "compaction" });
    while (min.status !== 200) {
      await sleep(5);
      min = await op(b.url, ns, "timestamp-leases/min", { name: "compaction" });
    }
    expect((min.json as { minLeased: number }).minLeased).toBeLessThanOrEqual(honoured);
    const next = (await op(b.url, ns, "timestamp-leases", { name: "compaction", count: 0 })).json as TimestampLeaseResponse;
    expect(next.minLeased).toBeLessThanOrEqual(honoured);
    expect(next.leased).toBeGreaterThan(honoured + 500);
  });

  it("during the new leader's lease-wait a wait is held back in line: free only once the old leader's locks could have lapsed", async () => {
    const a = await start();
    const b = await start();
    const map = await settled([a.url, b.url], 10_000, (m) => ledBy(m, a.url) === 2 && ledBy(m, b.url) === 2);
    const ns = namespaceLedBy(map, a.url);
    // The shard may have just come to a: past its lease-wait, the lock is granted at once.
    await sleep(LEASE_MS);
    const held = (await op(a.url, ns, "lock", { locks: [ex("d")] })).json as LockResponse;
    expect(held.status).toBe("acquired");
    const stoppedAt = performance.now();
    await a.close();
    let first = await op(b.url, ns, "timestamps", { count: 1 });
    while (first.status !== 200) {
      await sleep(5);
      first = await op(b.url, ns, "timestamps", { count: 1 });
    }
    const short = await op(b.url, ns, "wait-for-locks", { locks: [ex("d")], acquireTimeoutMs: 100 });
    expect(short.json).toEqual({ status: "timeout" });
    const long = await op(b.url, ns, "wait-for-locks", { locks: [ex("d")], acquireTimeoutMs: 5_000 });
    expect(long.json).toEqual({ status: "free" });
    // The old leader's leases ran out: validForMs (half the lock lease) plus the gate's rate margin, after the takeover.
    expect(performance.now() - stoppedAt).toBeGreaterThanOrEqual(LEASE_MS / 2 + 150);
  });
});
