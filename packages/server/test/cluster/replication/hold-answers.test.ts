import { LeaseholdError } from "@leasehold/protocol";
import { describe, expect, it } from "vitest";
import { holdAnswer, holdBegun } from "../../../src/cluster/replication/hold-answers.js";
import { ReplicationFencedError } from "../../../src/cluster/replication/sync-rule.js";
import type { ShardReplication } from "../../../src/cluster/replication/shard-replication.js";
import { TermReplicator } from "../../../src/cluster/replication/term-replicator.js";
import { WaitingLockHandle } from "../../../src/service/waiting-lock-handle.js";

/** A table whose every operation appends one entry, and a replication whose acknowledgement the test decides. */
function setup(ack: () => Promise<"acked">) {
  let sink: ((ns: string, entry: unknown) => void) | null = null;
  let seq = 0;
  const replication = { append: () => ++seq, whenAcked: ack } as unknown as ShardReplication;
  const table = { setReplicationSink: (s: never) => void (sink = s), exportNamespaces: () => ({}) };
  const replicator = new TermReplicator(table, replication);
  replicator.start();
  return { replicator, grant: <A>(answer: A): A => (sink!("ns", { type: "grant" }), answer) };
}

describe("holding answers for the standby's acknowledgement", () => {
  it("an immediate grant becomes a handle answered once acknowledged; an operation that appended nothing is answered as it is", async () => {
    let release: () => void = () => undefined;
    const { replicator, grant } = setup(() => new Promise((resolve) => (release = () => resolve("acked"))));
    const begun = holdBegun(replicator, () => grant({ status: "acquired" }));
    expect(begun).toBeInstanceOf(WaitingLockHandle);
    // Decided: it only waits for the acknowledgement (a lock batch of such entries sends its head with them).
    expect((begun as WaitingLockHandle<unknown>).acknowledging).toBe(true);
    let answered = false;
    void (begun as WaitingLockHandle<{ status: string }>).answer.then(() => (answered = true));
    await Promise.resolve();
    expect(answered).toBe(false);
    release();
    await expect((begun as WaitingLockHandle<{ status: string }>).answer).resolves.toEqual({ status: "acquired" });
    expect(holdBegun(replicator, () => ({ status: "timeout" }))).toEqual({ status: "timeout" });
  });

  it("a deposed leader's held answer is a 503 the client re-sends, never a 500", async () => {
    const { replicator, grant } = setup(() => Promise.reject(new ReplicationFencedError("deposed")));
    const begun = holdBegun(replicator, () => grant({ status: "acquired" })) as WaitingLockHandle<unknown>;
    const err = await begun.answer.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LeaseholdError);
    expect((err as LeaseholdError).code).toBe("UNAVAILABLE");
    const txn = await holdAnswer(replicator, async () => grant({ started: true })).catch((e: unknown) => e);
    expect((txn as LeaseholdError).status).toBe(503);
  });
});
