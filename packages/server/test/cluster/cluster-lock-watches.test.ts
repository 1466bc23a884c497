import type { LockWatchUpdate } from "@leasehold/protocol";
import { describe, expect, it } from "vitest";
import { startServer, type RunningServer } from "../../src/start-server.js";
import { sleep } from "../support/wait-for.js";
import { ledBy, namespaceLedBy, op, settled } from "./cluster-support.js";
import { schemaPerTest } from "./pg-schema.js";

const LEADER_LEASE_MS = 1_500;
const LEASE_MS = 2_000;

describe("cluster: lock watches follow the namespace's leader and its lock table", () => {
  const bed = schemaPerTest<RunningServer>();
  const start = async (): Promise<RunningServer> => {
    const server = await startServer({ leaseMs: LEASE_MS, watchTtlMs: 30_000, cluster: { connectionString: bed.schema.connectionString, leaderLeaseMs: LEADER_LEASE_MS, shards: 2 } });
    bed.open.push(server);
    return server;
  };

  it("the leader serves them (another server answers 421); logId is the shard term's leaderId; a leader that hands the shard over with its table hands the log over too: same logId and watches, a snapshot newer than the follower's version", async () => {
    const a = await start();
    const b = await start();
    const map = await settled([a.url, b.url], 10_000, (m) => ledBy(m, a.url) === 1 && ledBy(m, b.url) === 1);
    const ns = namespaceLedBy(map, a.url);
    expect((await op(b.url, ns, "lock-watches", { prefixes: [""] })).status).toBe(421);
    expect((await op(a.url, ns, "lock-watches", { prefixes: [""] })).json).toEqual({ prefixes: [""] });
    await sleep(LEASE_MS); // past a possible lease-wait of a shard that just moved
    const first = (await op(a.url, ns, "lock-events", { since: null })).json as LockWatchUpdate;
    expect(first.type).toBe("snapshot");
    const lock = (await op(a.url, ns, "lock", { locks: [{ descriptor: "d", mode: "exclusive" }] })).json as { status: string; lease: { leaderId: string } };
    expect(lock.status).toBe("acquired");
    expect(first.logId).toBe(lock.lease.leaderId);
    const next = (await op(a.url, ns, "lock-events", { since: { logId: first.logId, version: first.version } })).json as LockWatchUpdate;
    expect(next.type === "events" && next.events.map((e) => e.kind)).toEqual(["lock"]);

    await a.close();
    let after: LockWatchUpdate | null = null;
    const deadline = performance.now() + 10_000;
    while (after === null && performance.now() < deadline) {
      const answer = await op(b.url, ns, "lock-events", { since: { logId: next.logId, version: next.version } });
      if (answer.status === 200) after = answer.json as LockWatchUpdate;
      else await sleep(20);
    }
    if (after === null) throw new Error("no leader took the shard over");
    // The table moved with the leadership (a SIGTERM hand-over to the in-sync standby, --replicas 1):
    // the same log, its watch still registered and the lock still held; the follower, which cannot
    // be told what it missed in between, gets a snapshot newer than anything it saw. (A table that
    // starts empty starts a new log: engine/replication-entries.test.ts.)
    expect(after.type).toBe("snapshot");
    expect(after.logId).toBe(first.logId);
    expect(after.version).toBeGreaterThan(next.version);
    expect(after.type === "snapshot" && after).toMatchObject({ prefixes: [""], locked: [{ descriptor: "d", mode: "exclusive" }] });
  });
});
