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

describe("the simulated database network's blind window (an aimed fault's `blind` strike)", () => {
  it("loses exactly the answers of the named statements of that process, answered within the window", async () => {
    const s = new Scheduler();
    const network = new SimNetwork(new SimRandom(1), { answerLost: 0, notifyTwice: 0, notifyLost: 0 });
    const taker = new SimProcess("s1#2", s);
    const other = new SimProcess("s2#1", s);
    const takerLink = network.statementLink(taker, 100);
    const otherLink = network.statementLink(other, 100);
    network.blindAnswers("s1#2", ["read-leases"], 50);
    const applied: string[] = [];
    const send = (link: typeof takerLink, who: string, name: string): Promise<string> =>
      link.run(name, () => applied.push(`${who} ${name}`)).then(
        () => "answered",
        (err: unknown) => ((err as Error).message.includes("timed out") ? "timed out" : "failed"),
      );
    const during = [send(takerLink, "taker", "read-leases"), send(takerLink, "taker", "read-leases"), send(takerLink, "taker", "renew"), send(takerLink, "taker", "adopt-hand-over"), send(otherLink, "other", "read-leases")];
    await s.runUntil(60);
    const after = [send(takerLink, "taker", "read-leases"), send(otherLink, "other", "read-leases")];
    await s.runUntil(400);
    expect(await Promise.all(during)).toEqual(["timed out", "timed out", "answered", "answered", "answered"]);
    expect(await Promise.all(after)).toEqual(["answered", "answered"]);
    // A lost answer is of a statement applied as usual: each reached the database once.
    expect(applied.sort()).toEqual(["other read-leases", "other read-leases", "taker adopt-hand-over", "taker read-leases", "taker read-leases", "taker read-leases", "taker renew"]);
  });
});

describe("host crashes on the simulated network", () => {
  /** One message from a leader to its standby, its sender killed 0.1 ms after sending (before it can arrive: at least 0.2 ms). */
  async function sendThenKill(host: boolean): Promise<{ received: number; settled: string }> {
    const s = new Scheduler();
    const network = new SimNetwork(new SimRandom(1), { answerLost: 0, notifyTwice: 0, notifyLost: 0 });
    const leader = new SimProcess("s0#1", s);
    const standby = new SimProcess("s1#1", s);
    let received = 0;
    const store = { receive: () => (received++, { ok: true }) } as unknown as ReplicaStore;
    const transport = network.replicationTransport(leader, standby, () => store, 1_000);
    let settled = "pending";
    transport.send({ shard: 0 } as unknown as ReplicationMessage).then(
      () => (settled = "acknowledged"),
      () => (settled = "failed"),
    );
    s.after(0.1, "world", "kill", () => {
      if (host) leader.hostCrashed = true;
      leader.kill();
    });
    await s.runUntil(100);
    return { received, settled };
  }

  it("delivers a message in flight from a SIGKILLed process (the kernel sends what was written)", async () => {
    const { received, settled } = await sendThenKill(false);
    expect(received).toBe(1);
    // The sender is dead: its acknowledgement reaches no one.
    expect(settled).toBe("pending");
  });

  it("drops a message in flight from a process whose host crashed", async () => {
    const { received } = await sendThenKill(true);
    expect(received).toBe(0);
  });

  it("never applies a statement in flight from a process whose host crashed", async () => {
    for (const host of [false, true]) {
      const s = new Scheduler();
      const network = new SimNetwork(new SimRandom(1), { answerLost: 0, notifyTwice: 0, notifyLost: 0 });
      const member = new SimProcess("s0#1", s);
      let applied = 0;
      void network.statementLink(member, 1_000).run("renew", () => applied++).catch(() => undefined);
      s.after(0.1, "world", "kill", () => {
        if (host) member.hostCrashed = true;
        member.kill();
      });
      await s.runUntil(100);
      expect(applied).toBe(host ? 0 : 1);
    }
  });
});
