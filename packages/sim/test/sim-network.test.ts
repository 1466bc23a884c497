import { describe, expect, it } from "vitest";
import { ReplicationRefusal, type ReplicaStore, type ReplicationMessage } from "@leasehold/server/internal";
import { Scheduler } from "../src/scheduler.js";
import { SimProcess } from "../src/sim-clock.js";
import { SimNetwork } from "../src/sim-network.js";
import { SimRandom } from "../src/sim-random.js";

/** A standby whose replica store refuses every message with `code`. */
function refusing(code: "REPLICA_DIVERGED" | "NEEDS_SNAPSHOT"): ReplicaStore {
  return {
    receive: () => {
      throw new ReplicationRefusal(code, `refused: ${code}`);
    },
  } as unknown as ReplicaStore;
}

async function sendOnce(code: "REPLICA_DIVERGED" | "NEEDS_SNAPSHOT"): Promise<{ diverged: string[]; refusal: unknown }> {
  const s = new Scheduler();
  const diverged: string[] = [];
  const network = new SimNetwork(new SimRandom(1), { answerLost: 0, notifyTwice: 0, notifyLost: 0 }, (detail) => diverged.push(detail));
  const leader = new SimProcess("s0#1", s);
  const standby = new SimProcess("s1#1", s);
  const transport = network.replicationTransport(leader, standby, () => refusing(code), 1_000);
  const sent = transport.send({ shard: 0 } as unknown as ReplicationMessage).then(
    () => null,
    (err: unknown) => err,
  );
  await s.runUntil(100);
  return { diverged, refusal: await sent };
}

describe("the simulated replication network", () => {
  it("reports a standby's replica that could not apply its leader's stream (REPLICA_DIVERGED) as a broken promise", async () => {
    const { diverged, refusal } = await sendOnce("REPLICA_DIVERGED");
    expect(refusal).toBeInstanceOf(ReplicationRefusal);
    expect(diverged).toHaveLength(1);
    expect(diverged[0]).toContain("s1#1's replica of s0#1's stream");
  });

  it("does not report an ordinary refusal (a standby that needs a snapshot)", async () => {
    const { diverged, refusal } = await sendOnce("NEEDS_SNAPSHOT");
    expect(refusal).toBeInstanceOf(ReplicationRefusal);
    expect(diverged).toEqual([]);
  });
});
