import { shardOf, type LockResponse, type RefreshResponse, type UnlockResponse } from "@leasehold/protocol";
import pino from "pino";
import { describe, expect, it } from "vitest";
import { leaseWaitEnd } from "../../src/cluster/margins.js";
import { startServer, type RunningServer } from "../../src/start-server.js";
import { sleep } from "../support/wait-for.js";
import { clusterOf, op, settled } from "./cluster-support.js";
import { schemaPerTest } from "./pg-schema.js";

const LEADER_LEASE_MS = 1_000;
const LEASE_MS = 2_000;
/** What every lease answers (the default, half the lock lease): what a later leader waits out. */
const VALID_FOR_MS = LEASE_MS / 2;
const lock = (descriptor: string, acquireTimeoutMs = 0) => ({ locks: [{ descriptor, mode: "exclusive" as const }], acquireTimeoutMs });

/** Wait until `url`'s shard map names `leaderUrl` for `shard`; answers its leaderId. */
async function ledByNow(url: string, shard: number, leaderUrl: string, timeoutMs = 15_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const entry = (await clusterOf(url)).leaders[shard]!;
    if (entry.leaderUrl === leaderUrl && entry.leaderId !== null) return entry.leaderId;
    if (Date.now() > deadline) throw new Error(`shard ${shard} never led by ${leaderUrl}: ${JSON.stringify(entry)}`);
    await sleep(20);
  }
}

describe("cluster: a server that takes a shard back (A → B → A, empty table)", () => {
  const bed = schemaPerTest<RunningServer>();
  /** Every log line of the first server (in this process: its `time` is this process's wall clock). */
  const logged: Record<string, unknown>[] = [];
  const start = async (log = false): Promise<RunningServer> =>
    startServer({
      leaseMs: LEASE_MS,
      // Without standbys: every change of leader starts the shard empty (the subject here).
      cluster: { connectionString: bed.schema.connectionString, leaderLeaseMs: LEADER_LEASE_MS, shards: 2, replicas: 0 },
      ...(log ? { logger: pino({ level: "info" }, { write: (line: string) => void logged.push(JSON.parse(line) as Record<string, unknown>) }) } : {}),
    });

  it("voids the tokens of its own earlier term (atlasdb PR #1252): refresh answers them not held, unlock ignores them, their locks are free; its lease-wait has the margin", async () => {
    const a = await start(true);
    bed.open.push(a);
    await settled([a.url], 15_000, (m) => m.leaders.every((l) => l.leaderUrl === a.url));
    let ns = "";
    for (let i = 0; shardOf(ns, 2) !== 1 || ns === ""; i++) ns = `take-back-${i}`;
    const first = (await op(a.url, ns, "lock", lock("held-in-term-1"))).json as LockResponse;
    expect(first.status).toBe("acquired");
    if (first.status !== "acquired") return;
    const firstLeaderId = first.lease.leaderId;

    // A → B: a joiner gets its share by balance; a gives up its last shard, 1.
    const b = await start();
    try {
      await ledByNow(a.url, 1, b.url);
    } finally {
      // B → A: b stops and releases the shard; a, now alone, takes it back with an empty table.
      await b.close();
    }
    const secondLeaderId = await ledByNow(a.url, 1, a.url);
    // The take-back is a new term with a new leaderId: a lease of the first term says nothing now.
    expect(secondLeaderId).not.toBe(firstLeaderId);

    // A lock of the second term (after its lease-wait).
    const second = (await op(a.url, ns, "lock", lock("held-in-term-2", 10_000))).json as LockResponse;
    const grantedBy = Date.now();
    expect(second.status).toBe("acquired");
    // The lease-wait: the longest validForMs the earlier leaders answered (half the lock lease)
    // plus the rate margin (at least the gate's, 100 ms here), counted from the acquisition's
    // answer, which came just before a logged "shard acquired" (5 ms for that step and
    // whole-millisecond clocks; without the margin the grant comes 100 ms earlier).
    const takeBack = logged.filter((l) => l.msg === "shard acquired" && l.shard === 1).at(-1)!;
    expect(takeBack).toMatchObject({ reason: "released", lockDelayMs: VALID_FOR_MS, leaseWaitMs: leaseWaitEnd(0, VALID_FOR_MS, LEADER_LEASE_MS) });
    expect(grantedBy - (takeBack.time as number)).toBeGreaterThanOrEqual(VALID_FOR_MS + 100 - 5);
    if (second.status !== "acquired") return;
    expect(second.lease.leaderId).toBe(secondLeaderId);

    const refreshed = (await op(a.url, ns, "refresh", { tokens: [first.token, second.token] })).json as RefreshResponse;
    expect(refreshed.refreshed).toEqual([second.token]);
    expect(refreshed.lease.leaderId).not.toBe(firstLeaderId);
    expect(((await op(a.url, ns, "unlock", { tokens: [first.token] })).json as UnlockResponse).unlocked).toEqual([]);
    // What the first term's token held is free in the second term; the second term's lock is held.
    expect(((await op(a.url, ns, "lock", lock("held-in-term-1"))).json as LockResponse).status).toBe("acquired");
    expect(((await op(a.url, ns, "lock", lock("held-in-term-2"))).json as LockResponse).status).toBe("timeout");
  }, 45_000);
});
