import type { LockResponse } from "@leasehold/protocol";
import { describe, expect, it } from "vitest";
import { sleep } from "../../support/wait-for.js";
import { op } from "../cluster-support.js";
import { cliSchemaPerTest } from "../cli-schema-per-test.js";
import { leaderWithStandby, refreshAt, replicatedCli } from "./replicated-cli.js";

/**
 * The lock lease (1 s) is shorter than the claim window of a carried waiter (2 s): after the
 * hand-over, the holder's lease lapses on the new leader while the waiter still has its place, so
 * the lapse grants it from a timer, with no request to the namespace yet.
 */
const settings = { leaderLeaseMs: 900, shards: 1, leaseMs: 1_000 };

describe("cluster CLI with --replicas 1: a carried waiter granted by a lapse before any request", () => {
  const bed = cliSchemaPerTest();
  const start = replicatedCli(bed, settings);

  it("the new leader loads the namespace's timestamp bound before it serves, so the timer-driven grant does not crash it, and it serves the namespace after", async () => {
    const { a, b, ns } = await leaderWithStandby(bed, start, "lapse");
    const held = (await op(a.url, ns, "lock", { locks: [{ descriptor: "x", mode: "exclusive" }], acquireTimeoutMs: 0 })).json as LockResponse;
    if (held.status !== "acquired") throw new Error(`a did not grant: ${JSON.stringify(held)}`);
    // A waiter for x, on a's table and (once acknowledged) on b's; its caller gets 503 at the hand-over and does not re-send.
    const waiting = op(a.url, ns, "lock", { requestId: "w", locks: [{ descriptor: "x", mode: "exclusive" }], acquireTimeoutMs: 20_000 });
    await sleep(300);
    a.child.kill("SIGTERM");
    expect((await waiting).status).toBe(503);
    await a.exited;
    // Nobody calls b for the namespace while the lease lapses there (1 s after the promotion) and the window ends (2 s).
    await sleep(2_500);
    expect(b.child.exitCode, `b exited: ${JSON.stringify(b.lines.slice(-3))}`).toBeNull();
    // b serves the namespace: the lapsed hold is gone, a fresh lock on another descriptor is granted.
    const after = await refreshAt(b.url, ns, held.token);
    expect(after.refreshed).toEqual([]);
    const fresh = (await op(b.url, ns, "lock", { locks: [{ descriptor: "y", mode: "exclusive" }], acquireTimeoutMs: 0 })).json as LockResponse;
    expect(fresh.status).toBe("acquired");
  }, 60_000);
});
