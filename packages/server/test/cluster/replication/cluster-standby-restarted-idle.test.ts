import type { LockResponse } from "@leasehold/protocol";
import { describe, expect, it } from "vitest";
import { waitFor } from "../../support/wait-for.js";
import { op } from "../cluster-support.js";
import { cliSchemaPerTest } from "../cli-schema-per-test.js";
import { leaderWithStandby, refreshAt, replicatedCli } from "./replicated-cli.js";

/**
 * The lock lease (30 s) outlasts every wait below (20 s each): the lock never lapses, and a lapse
 * is the entry that would otherwise tell the leader its standby restarted.
 */
const settings = { leaderLeaseMs: 900, shards: 1, leaseMs: 30_000 };

describe("cluster CLI with --replicas 1: the standby of an idle shard restarts", () => {
  const bed = cliSchemaPerTest();
  const start = replicatedCli(bed, settings);

  type Row = { standby_incarnation: string | null; in_sync: boolean };
  const row = async (): Promise<Row | undefined> => (await bed.schema.query<Row>("SELECT standby_incarnation, in_sync FROM leases WHERE shard = 0"))[0];
  const incarnationOf = async (serverId: string): Promise<string | undefined> =>
    (await bed.schema.query<{ incarnation: string }>("SELECT incarnation FROM members WHERE server_id = $1", [serverId]))[0]?.incarnation;

  it("the leader, which sends the shard nothing, still notices the new incarnation in its heartbeat, records it and syncs the new process (its lock then survives the leader's SIGKILL)", async () => {
    const { a, b, ns } = await leaderWithStandby(bed, start, "idle");
    const held = (await op(a.url, ns, "lock", { locks: [{ descriptor: "held", mode: "exclusive" }], acquireTimeoutMs: 0 })).json as LockResponse;
    if (held.status !== "acquired") throw new Error(`a did not grant: ${JSON.stringify(held)}`);
    const old = await incarnationOf("idle-b");
    expect((await row())?.standby_incarnation).toBe(old);
    b.child.kill("SIGKILL");
    await b.exited;
    // The same --server-id: it claims the member row once the old heartbeat lapsed (a new incarnation).
    const b2 = await start(undefined, "idle-b");
    let fresh: string | undefined;
    await waitFor(
      () => {
        void incarnationOf("idle-b").then((i) => (fresh = i));
        return fresh !== undefined && fresh !== old;
      },
      "the restarted b heartbeating with its own incarnation",
      20_000,
    );
    // Nothing is sent to the shard from here on (no grant, no release, no lapse): only the probe or the heartbeat can tell a.
    let current: Row | undefined;
    await waitFor(
      () => {
        void row().then((r) => (current = r));
        return current !== undefined && current.standby_incarnation === fresh && current.in_sync;
      },
      "a naming the restarted b, in sync",
      20_000,
    );
    // Whichever rule noticed first (the idle standby's probe going unanswered while b was down, or
    // the heartbeat naming another incarnation), a recorded the old b not in sync before naming the new one.
    expect(a.lines.some((l) => l.msg === "standby recorded not in sync")).toBe(true);
    // Not vacuous: the lock is still held at a, so no lapse (an entry) is what told a.
    expect(((await op(a.url, ns, "refresh", { tokens: [held.token] })).json as { refreshed: string[] }).refreshed).toEqual([held.token]);
    // The check that matters: the new standby holds the table, so the lock outlives a crash of a.
    a.child.kill("SIGKILL");
    const refreshed = await refreshAt(b2.url, ns, held.token);
    expect(refreshed.refreshed).toEqual([held.token]);
  }, 60_000);
});
