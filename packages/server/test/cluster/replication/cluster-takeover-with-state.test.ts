import { shardOf, type LockResponse, type RefreshResponse, type TimestampsResponse } from "@leasehold/protocol";
import { describe, expect, it } from "vitest";
import type { CliProcess } from "../../support/cli-process.js";
import { waitFor } from "../../support/wait-for.js";
import { ledBy, namespaceLedBy, op, settled } from "../cluster-support.js";
import { cliSchemaPerTest } from "../cli-schema-per-test.js";
import { refreshAt, replicatedCli, standbyRows, type StandbyRow } from "./replicated-cli.js";
import { SOAK } from "../../support/soak.js";

const LEADER_LEASE_MS = 600;
/** Long, so that a new leader without the table would wait seconds (validForMs 5,000) before any grant. */
const LEASE_MS = 10_000;
const SHARDS = 2;

type Row = StandbyRow;

describe("cluster CLI with --replicas 1: the in-sync standby takes the shard over with its table", () => {
  const bed = cliSchemaPerTest();
  const start = replicatedCli(bed, { leaderLeaseMs: LEADER_LEASE_MS, shards: SHARDS, leaseMs: LEASE_MS });
  const rows = () => standbyRows(bed);

  /** Two servers, one shard each, each shard's standby in sync; a lock held on `held` in a namespace a leads. */
  async function heldAtA(bBreak?: string) {
    const a = await start();
    const b = await start(bBreak);
    const map = await settled([a.url, b.url], 20_000, (m) => ledBy(m, a.url) === 1 && ledBy(m, b.url) === 1);
    const ns = namespaceLedBy(map, a.url);
    const shard = shardOf(ns, SHARDS);
    let current: Row[] = [];
    await waitFor(
      () => {
        void rows().then((r) => (current = r));
        return current.length === SHARDS && current.every((r) => r.in_sync);
      },
      "every shard's standby in sync",
      20_000,
    );
    const locked = (await op(a.url, ns, "lock", { locks: [{ descriptor: "held", mode: "exclusive" }], acquireTimeoutMs: 0 })).json as LockResponse;
    if (locked.status !== "acquired") throw new Error(`a did not grant: ${JSON.stringify(locked)}`);
    const [row] = await bed.schema.query<Row>("SELECT shard, holder, leader_id, standby_id, in_sync, epoch FROM leases WHERE shard = $1", [shard]);
    // Not vacuous: the row names b as a's in-sync standby when a goes.
    expect(row).toMatchObject({ leader_id: locked.lease.leaderId, standby_id: expect.any(String), in_sync: true });
    expect(row!.standby_id).not.toBe(row!.holder);
    const stamps = (await op(a.url, ns, "timestamps", { count: 1_000 })).json as TimestampsResponse;
    return { a, b, ns, shard, token: locked.token, leaderId: locked.lease.leaderId, epoch: Number(row!.epoch), lastTimestamp: stamps.start + stamps.count - 1 };
  }

  /** What the new leader must answer once it took the shard with the table. */
  async function expectTableCarried(b: CliProcess, ns: string, token: string, leaderId: string, lastTimestamp: number): Promise<void> {
    // Timestamps go on above every one the old leader handed out (the carried counter resumes above the stored bound).
    const stamps = (await op(b.url, ns, "timestamps", { count: 1 })).json as TimestampsResponse;
    expect(stamps.start).toBeGreaterThan(lastTimestamp);
    // The held lock stays held: excluded at b, its token refreshed there.
    const busy = (await op(b.url, ns, "lock", { locks: [{ descriptor: "held", mode: "exclusive" }], acquireTimeoutMs: 0 })).json as LockResponse;
    expect(busy.status).toBe("timeout");
    // A free descriptor is granted at once, under the same leaderId.
    const fresh = (await op(b.url, ns, "lock", { locks: [{ descriptor: "free", mode: "exclusive" }], acquireTimeoutMs: 0 })).json as LockResponse;
    expect(fresh).toMatchObject({ status: "acquired", lease: { leaderId } });
    const refreshed = (await op(b.url, ns, "refresh", { tokens: [token] })).json as RefreshResponse;
    expect(refreshed.refreshed).toEqual([token]);
  }

  it("SIGTERM of the leader: it hands the shard over; the standby serves at once with the held lock held, the same leaderId and no lease-wait", async () => {
    const { a, b, ns, shard, token, leaderId, epoch, lastTimestamp } = await heldAtA();
    a.child.kill("SIGTERM");
    expect((await a.exited).code).toBe(0);
    const refreshed = await refreshAt(b.url, ns, token);
    expect(refreshed.refreshed).toEqual([token]);
    await expectTableCarried(b, ns, token, leaderId, lastTimestamp);
    // The log lines: a handed over, b promoted its replica without a lease-wait.
    expect(a.lines.find((l) => l.msg === "shard handed over" && l.shard === shard)).toMatchObject({ epoch, newEpoch: epoch + 1, leaderId });
    const promoted = b.lines.find((l) => l.msg === "standby promoted" && l.shard === shard);
    expect(promoted).toMatchObject({ kind: "hand-over", epoch: epoch + 1, fromEpoch: epoch, leaderId, leaseWaitMs: 0 });
    expect(promoted!.locksCarried).toBeGreaterThanOrEqual(1);
    expect(b.lines.find((l) => l.msg === "shard acquired" && l.shard === shard && l.epoch === epoch + 1)).toMatchObject({ reason: "handed over", leaseWaitMs: 0, leaderId });
    // The row: b holds it under the same leaderId, with the lease-wait recorded for the new epoch.
    const [row] = await bed.schema.query<Row & { valid_for_epoch: string }>("SELECT holder, leader_id, epoch, valid_for_epoch FROM leases WHERE shard = $1", [shard]);
    expect(row).toMatchObject({ leader_id: leaderId, epoch: String(epoch + 1), valid_for_epoch: String(epoch + 1) });
  }, 60_000);

  it("SIGKILL of the leader: the in-sync standby takes over once the lease expired, the token valid, no lease-wait", async () => {
    const { a, b, ns, shard, token, leaderId, epoch, lastTimestamp } = await heldAtA();
    a.child.kill("SIGKILL");
    await a.exited;
    const refreshed = await refreshAt(b.url, ns, token);
    expect(refreshed.refreshed).toEqual([token]);
    await expectTableCarried(b, ns, token, leaderId, lastTimestamp);
    const promoted = b.lines.find((l) => l.msg === "standby promoted" && l.shard === shard);
    expect(promoted).toMatchObject({ kind: "takeover", epoch: epoch + 1, fromEpoch: epoch, leaderId, leaseWaitMs: 0 });
    expect(promoted!.locksCarried).toBeGreaterThanOrEqual(1);
    expect(b.lines.find((l) => l.msg === "shard acquired" && l.shard === shard && l.epoch === epoch + 1)).toMatchObject({ reason: "standby takeover", leaseWaitMs: 0, leaderId });
  }, 60_000);

  /**
   * The standby falls behind (SIGSTOP): a records it not in sync, then unlocks the held lock and
   * grants it again to another token. a dies, b resumes and takes the shard. Its replica is stale
   * (it still holds the unlocked token), so the rule must keep b from promoting it: b starts the
   * shard empty, under a new leaderId. Answers what b says of the unlocked token and of the new one.
   */
  async function staleStandbyTakesOver(bBreak?: string) {
    const { a, b, ns, shard, token, leaderId } = await heldAtA(bBreak);
    b.child.kill("SIGSTOP");
    // A grant waits for the stopped standby until a records it not in sync (a third of a leader lease).
    const other = (await op(a.url, ns, "lock", { locks: [{ descriptor: "other", mode: "exclusive" }], acquireTimeoutMs: 0 })).json as LockResponse;
    expect(other.status).toBe("acquired");
    const [row] = await bed.schema.query<Row>("SELECT in_sync FROM leases WHERE shard = $1", [shard]);
    expect(row).toMatchObject({ in_sync: false });
    expect((await op(a.url, ns, "unlock", { tokens: [token] })).status).toBe(200);
    const again = (await op(a.url, ns, "lock", { locks: [{ descriptor: "held", mode: "exclusive" }], acquireTimeoutMs: 0 })).json as LockResponse;
    if (again.status !== "acquired") throw new Error(`a did not grant held again: ${JSON.stringify(again)}`);
    a.child.kill("SIGKILL");
    await a.exited;
    b.child.kill("SIGCONT");
    const unlocked = await refreshAt(b.url, ns, token);
    const current = (await op(b.url, ns, "refresh", { tokens: [again.token] })).json as RefreshResponse;
    const acquired = b.lines.find((l) => l.msg === "shard acquired" && l.shard === shard);
    return { unlocked: unlocked.refreshed, current: current.refreshed, leaderId, acquired };
  }

  it("a standby that fell behind (not in sync) never promotes its stale table: the shard starts empty under a new leaderId, with the lease-wait", async () => {
    const { unlocked, acquired, leaderId } = await staleStandbyTakesOver();
    // The check: a token unlocked at the old leader is not held anywhere.
    expect(unlocked).toEqual([]);
    expect(acquired).toMatchObject({ reason: "expired" });
    expect(acquired!.leaderId).not.toBe(leaderId);
    expect(acquired!.leaseWaitMs).toBeGreaterThan(0);
  }, 60_000);

  // Soak mode only: in the test command the simulator's control of this rule stands for it.
  it.runIf(SOAK)("negative control (LEASEHOLD_TEST_BREAK=promote-any-replica): with the rule off, the stale table is promoted and the check fires", async () => {
    const { unlocked, current, leaderId, acquired } = await staleStandbyTakesOver("promote-any-replica");
    // The check of the test above fails: the unlocked token is held again at the new leader, and
    // the lock a granted last (same leaderId) is lost.
    expect(unlocked).not.toEqual([]);
    expect(current).toEqual([]);
    expect(acquired).toMatchObject({ leaderId, leaseWaitMs: 0 });
  }, 60_000);
});
