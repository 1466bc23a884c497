import type { LockResponse, NamespaceLocksResponse } from "@leasehold/protocol";
import { describe, expect, it } from "vitest";
import { rawRequest, type RawResponse } from "../../support/raw-request.js";
import { sleep } from "../../support/wait-for.js";
import { op } from "../cluster-support.js";
import { cliSchemaPerTest } from "../cli-schema-per-test.js";
import { leaderWithStandby, refreshAt, replicatedCli } from "./replicated-cli.js";
import { SOAK } from "../../support/soak.js";

// The negative control (its b logs at debug level) failed once in CI: b took the shard without the
// table (the refresh did not find the token). One cause was found and fixed: a pass of a in flight
// at SIGTERM read the row after the term ended and released it as an orphan under the hand-over
// (cluster-hand-over-pass.test.ts). The other way to lose the table here is time: the stop hands
// over only while the row says in sync, a standby is late after a third of the leader lease, and
// the final acknowledgement's wait is bounded by one. 2 s (it was 1.2 s) leaves room on a loaded
// machine; a join waits a leader lease, so each test takes 2 s longer. On failure the message
// quotes the servers' hand-over lines.
const settings = { leaderLeaseMs: 2_000, shards: 1, leaseMs: 10_000 };
const HELD = [{ descriptor: "held", mode: "exclusive" }] as const;

/** The descriptions of the requests waiting on `held` at `url`, in queue order. */
async function waitersAt(url: string, ns: string): Promise<string[]> {
  const page = (await rawRequest(url, `/v1/namespaces/${ns}/locks`, { method: "GET" })).json as NamespaceLocksResponse & { descriptors?: { descriptor: string; waiters: { clientDescription?: string }[] }[] };
  return (page.descriptors ?? []).find((d) => d.descriptor === "held")?.waiters.map((w) => w.clientDescription ?? "?") ?? [];
}

describe("cluster CLI with --replicas 1: a waiter carried by a hand-over keeps its place for its re-sent requestId", () => {
  const bed = cliSchemaPerTest();
  const start = replicatedCli(bed, settings);

  /**
   * A lock held at a; a second client waits on it there with a requestId; a gets SIGTERM and hands
   * the shard to b. At b a later client asks for the same descriptor first, then the waiter re-sends
   * its requestId, then the holder unlocks. Answers which of the two was granted first.
   */
  async function waiterAcrossHandOver(bBreak?: string): Promise<{ first: string; resentAnswer: LockResponse; laterAnswer: LockResponse }> {
    const { a, b, ns } = await leaderWithStandby(bed, start, "wait", { b: bBreak });
    const holder = (await op(a.url, ns, "lock", { locks: HELD, acquireTimeoutMs: 0 })).json as LockResponse;
    if (holder.status !== "acquired") throw new Error(`a did not grant: ${JSON.stringify(holder)}`);
    const waiter = { locks: HELD, acquireTimeoutMs: 30_000, requestId: "carried-waiter", clientDescription: "carried" };
    const atA = op(a.url, ns, "lock", waiter);
    for (let i = 0; (await waitersAt(a.url, ns)).length === 0; i++) {
      if (i > 400) throw new Error("the waiter never queued at a");
      await sleep(25);
    }
    a.child.kill("SIGTERM");
    // The gate closed: the waiter is answered 503 and re-sends to the new leader.
    expect((await atA).status).toBe(503);
    const refreshed = (await refreshAt(b.url, ns, holder.token)).refreshed;
    // On failure the servers' own account of the hand-over says why (released, timed out, late adoption).
    const story = () => JSON.stringify([...a.lines, ...b.lines].filter((l) => /shard|stand|hand|sync|releas|promot/i.test(String(l.msg))));
    expect(refreshed, `b took the shard with the table (handed over, not released); the servers logged: ${story()}`).toEqual([holder.token]);
    let first = "";
    const answered = (who: string) => (res: RawResponse): LockResponse => {
      first ||= who;
      return res.json as LockResponse;
    };
    const later = op(b.url, ns, "lock", { locks: HELD, acquireTimeoutMs: 30_000, requestId: "later", clientDescription: "later" }).then(answered("later"));
    for (let i = 0; !(await waitersAt(b.url, ns)).includes("later"); i++) {
      if (i > 400) throw new Error("the later request never queued at b");
      await sleep(10);
    }
    // With its place kept, the re-sent request joins the carried waiter (still two waiting);
    // without it, it queues anew. Either way two wait before the holder unlocks.
    const resent = op(b.url, ns, "lock", waiter).then(answered("carried"));
    for (let i = 0; (await waitersAt(b.url, ns)).length < 2; i++) {
      if (i > 400) throw new Error("the re-sent request never queued at b");
      await sleep(10);
    }
    expect((await op(b.url, ns, "unlock", { tokens: [holder.token] })).status).toBe(200);
    const firstAnswer = await Promise.race([later, resent]);
    // Whoever got the lock frees it, so the other is granted too.
    if (firstAnswer.status === "acquired") await op(b.url, ns, "unlock", { tokens: [firstAnswer.token] });
    return { first, resentAnswer: await resent, laterAnswer: await later };
  }

  it("after SIGTERM of its leader, the re-sent waiter is granted when the holder unlocks, before a request that reached the new leader earlier", async () => {
    const { first, resentAnswer, laterAnswer } = await waiterAcrossHandOver();
    expect(first).toBe("carried");
    expect(resentAnswer.status).toBe("acquired");
    expect(laterAnswer.status).toBe("acquired");
  }, 45_000);

  // Soak mode only: in the test command the simulator's control of this rule stands for it.
  it.runIf(SOAK)("negative control (LEASEHOLD_TEST_BREAK=drop-carried-waiters on the new leader): the carried place is dropped, the later request goes first", async () => {
    const { first } = await waiterAcrossHandOver("drop-carried-waiters");
    expect(first).toBe("later");
  }, 45_000);
});
