import { shardOf, type LockResponse } from "@leasehold/protocol";
import { describe, expect, it } from "vitest";
import { waitFor } from "../../support/wait-for.js";
import { ledBy, op, settled } from "../cluster-support.js";
import { cliSchemaPerTest } from "../cli-schema-per-test.js";
import { metricAt, refreshAt, replicatedCli } from "./replicated-cli.js";
import { SOAK } from "../../support/soak.js";

const SHARDS = 2;
const settings = { leaderLeaseMs: 600, shards: SHARDS, leaseMs: 10_000 };

describe("cluster CLI with --replicas 1: a balance move hands the shard over with its table", () => {
  const bed = cliSchemaPerTest();
  const start = replicatedCli(bed, settings);

  /**
   * a leads both shards alone, a lock held in a namespace of each; b joins and balance moves one
   * shard to it. Answers what b says of the moved shard's lock, and the log lines about it.
   */
  async function balanceToJoiner(aBreak?: string) {
    const a = await start(aBreak);
    await settled([a.url], 20_000, (m) => ledBy(m, a.url) === SHARDS);
    const held = new Map<number, { ns: string; token: string; leaderId: string }>();
    for (const ns of ["ns-0", "ns-1", "ns-2", "ns-3", "ns-4", "ns-5"]) {
      const shard = shardOf(ns, SHARDS);
      if (held.has(shard)) continue;
      const locked = (await op(a.url, ns, "lock", { locks: [{ descriptor: "held", mode: "exclusive" }], acquireTimeoutMs: 0 })).json as LockResponse;
      if (locked.status !== "acquired") throw new Error(`a did not grant: ${JSON.stringify(locked)}`);
      held.set(shard, { ns, token: locked.token, leaderId: locked.lease.leaderId });
    }
    expect(held.size).toBe(SHARDS);
    const b = await start();
    const map = await settled([a.url, b.url], 20_000, (m) => ledBy(m, a.url) === 1 && ledBy(m, b.url) === 1);
    const moved = map.leaders.find((l) => l.leaderUrl === b.url)!.shard;
    const { ns, token, leaderId } = held.get(moved)!;
    const refreshed = await refreshAt(b.url, ns, token);
    const acquired = b.lines.find((l) => l.msg === "shard acquired" && l.shard === moved);
    return { a, b, moved, ns, token, leaderId, refreshed: refreshed.refreshed, acquired };
  }

  it("the joiner is made the shard's standby, then takes it with the held lock held, the same leaderId and no lease-wait", async () => {
    const { a, b, moved, ns, token, leaderId, refreshed, acquired } = await balanceToJoiner();
    // The check: the lock held at a is held at b, which grants a free descriptor at once.
    expect(refreshed).toEqual([token]);
    expect(acquired).toMatchObject({ reason: "handed over", leaseWaitMs: 0, leaderId });
    const busy = (await op(b.url, ns, "lock", { locks: [{ descriptor: "held", mode: "exclusive" }], acquireTimeoutMs: 0 })).json as LockResponse;
    expect(busy.status).toBe("timeout");
    const fresh = (await op(b.url, ns, "lock", { locks: [{ descriptor: "free", mode: "exclusive" }], acquireTimeoutMs: 0 })).json as LockResponse;
    expect(fresh).toMatchObject({ status: "acquired", lease: { leaderId } });
    // The log lines and the counters say how it moved.
    const handed = a.lines.find((l) => l.msg === "shard handed over" && l.shard === moved);
    expect(handed).toMatchObject({ reason: "balance", leaderId });
    expect(handed!.locksCarried).toBeGreaterThanOrEqual(1);
    expect(b.lines.find((l) => l.msg === "standby promoted" && l.shard === moved)).toMatchObject({ kind: "hand-over", leaderId, leaseWaitMs: 0 });
    await waitFor(() => a.lines.some((l) => l.msg === "shard handed over"), "the hand-over line");
    expect(await metricAt(a.url, 'leasehold_cluster_hand_overs_total{reason="balance",state="carried"}')).toBe(1);
    expect(await metricAt(a.url, 'leasehold_cluster_hand_overs_total{reason="balance",state="released"}')).toBe(0);
  }, 45_000);

  // Soak mode only: in the test command the simulator's control of this rule stands for it.
  it.runIf(SOAK)("negative control (LEASEHOLD_TEST_BREAK=balance-by-release): released as before, the moved shard's lock is lost", async () => {
    const { a, refreshed, acquired, leaderId } = await balanceToJoiner("balance-by-release");
    // The check of the test above fails: the token is not held at the new leader, whose table
    // started empty under a new leaderId after the lease-wait.
    expect(refreshed).toEqual([]);
    expect(acquired).toMatchObject({ reason: "released" });
    expect(acquired!.leaderId).not.toBe(leaderId);
    expect(await metricAt(a.url, 'leasehold_cluster_hand_overs_total{reason="balance",state="released"}')).toBe(1);
  }, 45_000);
});
