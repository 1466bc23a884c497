import { describe, expect, it } from "vitest";
import { ReplicationLog } from "../../../src/cluster/replication/replication-log.js";
import { ReplicationSender, type ReplicationTransport } from "../../../src/cluster/replication/replication-sender.js";
import { ReplicationRefusal, type ReplicationAck, type ReplicationMessage, type StreamIdentity } from "../../../src/cluster/replication/replication-wire.js";
import { FakeReplicationClock, settle } from "./fake-replication-clock.js";

const stream: StreamIdentity = { shard: 3, epoch: 7, leaderId: "L", leaderIncarnation: "li", standbyIncarnation: "si", streamId: "s1" };

/** A transport whose answers the test gives, one message at a time. */
class HeldTransport implements ReplicationTransport {
  readonly sent: ReplicationMessage[] = [];
  private pending: { resolve: (a: ReplicationAck) => void; reject: (e: unknown) => void }[] = [];
  inFlightMax = 0;
  closed = false;
  send(message: ReplicationMessage): Promise<ReplicationAck> {
    this.sent.push(message);
    return new Promise((resolve, reject) => {
      this.pending.push({ resolve, reject });
      this.inFlightMax = Math.max(this.inFlightMax, this.pending.length);
    });
  }
  /** Acknowledge the oldest message in flight with `ackedSeq`. */
  async answer(ackedSeq: number): Promise<void> {
    this.pending.shift()!.resolve({ ackedSeq });
    await settle();
  }
  async fail(err: unknown): Promise<void> {
    this.pending.shift()!.reject(err);
    await settle();
  }
  close(): Promise<void> {
    this.closed = true;
    return Promise.resolve();
  }
}

function setup(entriesBeforeSnapshot = 0, extra: { maxInFlight?: number } = {}) {
  const clock = new FakeReplicationClock();
  const log = new ReplicationLog<string>(clock);
  for (let i = 0; i < entriesBeforeSnapshot; i++) log.append(`old${i}`);
  const transport = new HeldTransport();
  const refused: ReplicationRefusal[] = [];
  const seq = log.startRetaining();
  const sender = new ReplicationSender<string>({ log, transport, stream, snapshot: { seq, payload: { table: "T" } }, clock, retryMs: 50, onRefused: (r) => refused.push(r), ...extra });
  return { clock, log, transport, sender, refused, seq };
}

describe("ReplicationLog", () => {
  it("numbers entries in order and shows a turn's entries to the sender only when the turn ends, all together", async () => {
    const clock = new FakeReplicationClock();
    const log = new ReplicationLog<string>(clock);
    log.startRetaining();
    let flushes = 0;
    log.onFlush(() => flushes++);
    expect([log.append("a"), log.append("b"), log.append("c")]).toEqual([1, 2, 3]);
    expect(log.since(0).entries).toEqual([]);
    await clock.endTurn();
    expect(flushes).toBe(1);
    expect(log.since(0)).toEqual({ fromSeq: 0, entries: ["a", "b", "c"] });
    expect(log.since(1)).toEqual({ fromSeq: 1, entries: ["b", "c"] });
    log.append("d");
    expect(log.since(3).entries).toEqual([]);
    await clock.endTurn();
    expect(flushes).toBe(2);
    expect(log.since(3)).toEqual({ fromSeq: 3, entries: ["d"] });
  });

  it("acknowledgements are cumulative: one drops every entry up to it, an older one changes nothing, one beyond the last entry is refused", async () => {
    const clock = new FakeReplicationClock();
    const log = new ReplicationLog<string>(clock);
    log.startRetaining();
    for (const e of ["a", "b", "c", "d"]) log.append(e);
    await clock.endTurn();
    const heard: number[] = [];
    log.onAck((n) => heard.push(n));
    expect(log.acknowledge(3)).toBe(true);
    expect(log.acknowledge(2)).toBe(false);
    expect(log.ackedSeq).toBe(3);
    expect(log.since(0)).toEqual({ fromSeq: 3, entries: ["d"] });
    expect(() => log.acknowledge(5)).toThrow(/beyond the last entry/);
    expect(heard).toEqual([3]);
    expect(log.lag().entries).toBe(1);
  });

  it("keeps nothing while no standby follows, so memory does not grow without one", async () => {
    const clock = new FakeReplicationClock();
    const log = new ReplicationLog<string>(clock);
    for (let i = 0; i < 100; i++) log.append(`e${i}`);
    await clock.endTurn();
    expect(log.lastSeq).toBe(100);
    expect(log.lag()).toEqual({ entries: 0, ms: 0 });
    expect(log.startRetaining()).toBe(100);
    log.append("x");
    await clock.endTurn();
    expect(log.since(100)).toEqual({ fromSeq: 100, entries: ["x"] });
  });
});

describe("ReplicationSender", () => {
  it("sends the snapshot alone first, then each turn's entries as soon as the turn ends, several messages in flight", async () => {
    const { clock, log, transport, sender, seq } = setup(2);
    expect(seq).toBe(2);
    sender.start();
    log.append("a");
    log.append("b");
    await clock.endTurn();
    // Entries wait for the snapshot's acknowledgement.
    expect(transport.sent.map((m) => m.kind)).toEqual(["snapshot"]);
    expect(transport.sent[0]).toMatchObject({ kind: "snapshot", seq: 2, snapshot: { table: "T" }, stream });
    await transport.answer(2);
    // Group commit: the turn's two entries went in one message.
    expect(transport.sent[1]).toMatchObject({ kind: "entries", fromSeq: 2, entries: ["a", "b"] });
    log.append("c");
    await clock.endTurn();
    log.append("d");
    log.append("e");
    await clock.endTurn();
    // Each turn's entries left at the end of that turn, without waiting for an acknowledgement.
    expect(transport.sent.slice(2)).toMatchObject([
      { kind: "entries", fromSeq: 4, entries: ["c"] },
      { kind: "entries", fromSeq: 5, entries: ["d", "e"] },
    ]);
    expect(transport.inFlightMax).toBe(3);
    await transport.answer(4);
    expect(log.ackedSeq).toBe(4);
    await transport.answer(5);
    await transport.answer(7);
    expect(log.ackedSeq).toBe(7);
    expect(transport.sent.length).toBe(4);
  });

  it("entries no answer waits for are sent when due (lazyMs), or with the next urgent turn, or once someone waits for them", async () => {
    const { clock, log, transport, sender } = setup();
    sender.start();
    await transport.answer(0);
    log.append("release-1", false);
    await clock.endTurn();
    expect(transport.sent.length).toBe(1);
    // The next turn's grant carries it.
    log.append("grant-2");
    await clock.endTurn();
    expect(transport.sent[1]).toMatchObject({ kind: "entries", fromSeq: 0, entries: ["release-1", "grant-2"] });
    // Alone, it is due after lazyMs (2 ms by default).
    log.append("release-3", false);
    await clock.endTurn();
    await clock.advance(1);
    expect(transport.sent.length).toBe(2);
    await clock.advance(1);
    expect(transport.sent[2]).toMatchObject({ fromSeq: 2, entries: ["release-3"] });
    // Someone waits for one (a hand-over's last entry): sent at once.
    log.append("waiter-4", false);
    await clock.endTurn();
    log.expedite(4);
    expect(transport.sent[3]).toMatchObject({ fromSeq: 3, entries: ["waiter-4"] });
  });

  it("with maxInFlight 1, one message is in flight and the next carries everything that accumulated meanwhile", async () => {
    const { clock, log, transport, sender } = setup(0, { maxInFlight: 1 });
    sender.start();
    await transport.answer(0);
    log.append("a");
    await clock.endTurn();
    log.append("b");
    await clock.endTurn();
    log.append("c");
    await clock.endTurn();
    expect(transport.sent.length).toBe(2);
    await transport.answer(1);
    expect(transport.sent[2]).toMatchObject({ kind: "entries", fromSeq: 1, entries: ["b", "c"] });
    await transport.answer(3);
    expect(log.ackedSeq).toBe(3);
    expect(transport.inFlightMax).toBe(1);
  });

  it("after a failure with several messages in flight, the later messages' answers no longer count and all is re-sent from the last acknowledgement", async () => {
    const { clock, log, transport, sender } = setup();
    sender.start();
    await transport.answer(0);
    log.append("a");
    await clock.endTurn();
    log.append("b");
    await clock.endTurn();
    expect(transport.sent.length).toBe(3);
    await transport.fail(new Error("ECONNRESET"));
    // The second message's answer arrives after the failure: it is not taken.
    await transport.answer(2);
    expect(log.ackedSeq).toBe(0);
    log.append("c");
    await clock.endTurn();
    // Nothing is sent before the retry.
    expect(transport.sent.length).toBe(3);
    await clock.advance(50);
    expect(transport.sent[3]).toMatchObject({ kind: "entries", fromSeq: 0, entries: ["a", "b", "c"] });
    await transport.answer(3);
    expect(log.ackedSeq).toBe(3);
  });

  it("after a failed exchange re-sends from the last acknowledgement, and the snapshot when it was never acknowledged", async () => {
    const { clock, log, transport, sender } = setup(1);
    sender.start();
    await transport.fail(new Error("ECONNRESET"));
    await clock.advance(50);
    expect(transport.sent.map((m) => m.kind)).toEqual(["snapshot", "snapshot"]);
    await transport.answer(1);
    log.append("a");
    await clock.endTurn();
    await transport.fail(new Error("timeout"));
    log.append("b");
    await clock.endTurn();
    await clock.advance(50);
    expect(transport.sent[3]).toMatchObject({ kind: "entries", fromSeq: 1, entries: ["a", "b"] });
    await transport.answer(3);
    expect(log.ackedSeq).toBe(3);
  });

  it("a refusal ends the stream: nothing more is sent, the connection closes, the owner hears it", async () => {
    const { clock, log, transport, sender, refused } = setup();
    sender.start();
    await transport.fail(new ReplicationRefusal("STANDBY_RESTARTED", "restarted"));
    log.append("a");
    await clock.endTurn();
    await clock.advance(1_000);
    expect(transport.sent.length).toBe(1);
    expect(transport.closed).toBe(true);
    expect(refused.map((r) => r.code)).toEqual(["STANDBY_RESTARTED"]);
  });

  it("an earlier message's answer may acknowledge a later one already applied (messages crossed on the way): taken, not a divergence", async () => {
    // Found by pnpm sim (seed 139): the hand-over entry's message overtook the one before it, and
    // the earlier message's cumulative answer, covering both, was refused as REPLICA_DIVERGED.
    const { clock, log, transport, sender, refused } = setup();
    sender.start();
    await transport.answer(0);
    log.append("a");
    await clock.endTurn();
    log.append("b");
    await clock.endTurn();
    expect(transport.sent.length).toBe(3);
    await transport.answer(2);
    expect(refused).toEqual([]);
    expect(log.ackedSeq).toBe(2);
    await transport.answer(2);
    expect(log.ackedSeq).toBe(2);
  });

  it("an acknowledgement beyond what was sent is a diverged standby, never taken as held", async () => {
    const { clock, log, transport, sender, refused } = setup();
    sender.start();
    await transport.answer(0);
    log.append("a");
    await clock.endTurn();
    await transport.answer(5);
    expect(log.ackedSeq).toBe(0);
    expect(refused.map((r) => r.code)).toEqual(["REPLICA_DIVERGED"]);
  });
});
