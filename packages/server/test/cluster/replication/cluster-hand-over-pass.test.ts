import { fnv1a32, shardOf, type LockResponse } from "@leasehold/protocol";
import { afterEach, describe, expect, it } from "vitest";
import { waitFor } from "../../support/wait-for.js";
import { ledBy, op, settled } from "../cluster-support.js";
import { cliSchemaPerTest } from "../cli-schema-per-test.js";
import { refreshAt, replicatedCli } from "./replicated-cli.js";

const SHARDS = 2;
// The pause must end well inside a leader lease: the term being handed over is no longer renewed.
const settings = { leaderLeaseMs: 1_500, shards: SHARDS, leaseMs: 10_000 };
const PAUSE_MS = 600;

describe("cluster CLI with --replicas 1: a pass of the leader during a hand-over leaves the shard to it", () => {
  const bed = cliSchemaPerTest();
  const start = replicatedCli(bed, settings);
  afterEach(() => {
    delete process.env.LEASEHOLD_TEST_HAND_OVER_PAUSE_MS;
  });

  /**
   * a leads both shards alone, a lock held in a namespace of each; b joins and balance hands one
   * shard to it. a's hand-over pauses between the final acknowledgement and the row move
   * (LEASEHOLD_TEST_HAND_OVER_PAUSE_MS), and the test NOTIFYs a in that pause, so a runs a pass
   * that reads the row still naming it while no term of a leads the shard. Answers what b says of
   * the moved shard's lock, and the log lines.
   */
  async function passDuringHandOver(aBreak: string) {
    process.env.LEASEHOLD_TEST_HAND_OVER_PAUSE_MS = String(PAUSE_MS);
    const a = await start(aBreak, "pass-a");
    delete process.env.LEASEHOLD_TEST_HAND_OVER_PAUSE_MS;
    await settled([a.url], 20_000, (m) => ledBy(m, a.url) === SHARDS);
    const held = new Map<number, { ns: string; token: string }>();
    for (let i = 0; held.size < SHARDS; i++) {
      const ns = `ns-${i}`;
      const shard = shardOf(ns, SHARDS);
      if (held.has(shard)) continue;
      const locked = (await op(a.url, ns, "lock", { locks: [{ descriptor: "held", mode: "exclusive" }], acquireTimeoutMs: 0 })).json as LockResponse;
      if (locked.status !== "acquired") throw new Error(`a did not grant: ${JSON.stringify(locked)}`);
      held.set(shard, { ns, token: locked.token });
    }
    const b = await start(undefined, "pass-b");
    // The pause begins right after this line (balance-hand-over.ts); a NOTIFY on the cluster's channel
    // makes a run a pass inside it.
    const isWaited = (l: Record<string, unknown>): boolean => l.msg === "hand-over: final log wait over" && l.outcome === "acked";
    await waitFor(() => a.lines.some(isWaited), "a's final acknowledgement", 20_000);
    const at = a.lines.findIndex(isWaited);
    const waited = a.lines[at]!;
    const channel = `leasehold_released_${fnv1a32(bed.schema.name).toString(16)}`;
    await bed.schema.query("SELECT pg_notify($1, '0')", [channel]);
    const moved = waited.shard as number;
    const { ns, token } = held.get(moved)!;
    await waitFor(() => b.lines.some((l) => l.msg === "shard acquired" && l.shard === moved), "b leading the moved shard", 20_000);
    const refreshed = (await refreshAt(b.url, ns, token)).refreshed;
    const heard = a.lines.slice(at).some((l) => l.msg === "NOTIFY heard");
    return { a, b, moved, token, refreshed, heard, acquired: b.lines.find((l) => l.msg === "shard acquired" && l.shard === moved) };
  }

  it("the pass counts the row as still its own: b takes the shard with the held lock", async () => {
    const { a, token, refreshed, heard, acquired } = await passDuringHandOver("");
    expect(heard, "a heard the NOTIFY inside the pause").toBe(true);
    expect(refreshed).toEqual([token]);
    expect(acquired).toMatchObject({ reason: "handed over", leaseWaitMs: 0 });
    expect(a.lines.some((l) => l.msg === "shard handed over")).toBe(true);
  }, 45_000);

  // Two rules keep that row now: the pass counts a term being handed over as its own, and never
  // releases a row of its own that names an in-sync standby (the taker, during a hand-over); each
  // alone is enough, so the control removes both (the second alone: plan-shards.test.ts).
  it("negative control (LEASEHOLD_TEST_BREAK=release-handing-over,release-synced-orphan on a): the pass releases the shard under the hand-over, and its lock is lost", async () => {
    const { a, refreshed, heard, acquired } = await passDuringHandOver("release-handing-over,release-synced-orphan");
    expect(heard, "a heard the NOTIFY inside the pause").toBe(true);
    expect(refreshed).toEqual([]);
    expect(acquired).toMatchObject({ reason: "released" });
    // The hand-over, once its pause ends, finds the row gone from under it.
    await waitFor(() => a.lines.some((l) => typeof l.msg === "string" && l.msg.startsWith("hand-over matched nothing")), "a's hand-over matching nothing", 5_000);
  }, 45_000);
});
