import { describe, expect, it } from "vitest";
import { parseReplicationMessage, ReplicationRefusal, type ReplicationMessage } from "../../../src/cluster/replication/replication-wire.js";
import { compactEntry, expandEntries, expandEntry, readAnswers, sameStream, toStandbyValue } from "../../../src/cluster/replication/stream-replication-codec.js";

const stream = { shard: 1, epoch: 3, leaderId: "L3", leaderIncarnation: "leader-inc", standbyIncarnation: "standby-inc", streamId: "s1" };
const entries: ReplicationMessage = { kind: "entries", stream, fromSeq: 4, entries: ["e5"] };

describe("what the replication stream's frames hold (leasehold-replication/2)", () => {
  it("an entries message of the connection's previous stream leaves its stream out; the standby reads it as that stream's", () => {
    const value = toStandbyValue(entries, { ...stream });
    expect(value).toEqual({ kind: "entries", fromSeq: 4, entries: ["e5"] });
    expect(parseReplicationMessage(JSON.parse(JSON.stringify(value)), 1, stream)).toEqual(entries);
  });

  it("the first message of a connection, a snapshot, and a message of another stream carry their stream", () => {
    expect(toStandbyValue(entries, null)).toEqual(entries);
    const snapshot: ReplicationMessage = { kind: "snapshot", stream, seq: 4, snapshot: {} };
    expect(toStandbyValue(snapshot, stream)).toBe(snapshot);
    for (const other of [{ ...stream, epoch: 4 }, { ...stream, streamId: "s2" }, { ...stream, standbyIncarnation: "x" }]) {
      expect(sameStream(other, stream)).toBe(false);
      expect(toStandbyValue({ ...entries, stream: other }, stream)).toEqual({ ...entries, stream: other });
    }
  });

  it("an entries message without a stream, with none before it on the connection, is refused naming the field", () => {
    const refused = (() => {
      try {
        return parseReplicationMessage({ kind: "entries", fromSeq: 4, entries: ["e5"] }, 1, null);
      } catch (err) {
        return err;
      }
    })();
    expect(refused).toBeInstanceOf(ReplicationRefusal);
    expect((refused as ReplicationRefusal).message).toMatch(/stream must be an object/);
    // A snapshot without one is refused even after another message.
    expect(() => parseReplicationMessage({ kind: "snapshot", seq: 4, snapshot: {} }, 1, stream)).toThrow(/stream must be an object/);
  });

  it("an answer frame holds the answers of a batch in order: acknowledgements and a refusal", () => {
    const answers = readAnswers("http://standby", [4, 6, { error: { code: "NEEDS_SNAPSHOT", message: "gap", details: {} } }]);
    expect(answers.slice(0, 2)).toEqual([{ ackedSeq: 4 }, { ackedSeq: 6 }]);
    expect(answers[2]).toBeInstanceOf(ReplicationRefusal);
    expect((answers[2] as ReplicationRefusal).code).toBe("NEEDS_SNAPSHOT");
    expect(readAnswers("http://standby", ["nonsense"])[0]).toBeInstanceOf(Error);
  });
});

describe("the compact form of a lock + unlock pair's entries", () => {
  const grant = {
    ns: "ns-a",
    entry: { type: "grant", kind: "lock", token: "tok-1", holds: [{ descriptor: "k1", mode: "exclusive", fencingToken: 7 }], allOrNone: true, max: 1, waitedMs: 0, requestId: "r-1", specs: [{ descriptor: "k1", mode: "exclusive" }], next: 8 },
  };
  const bare = { ns: "ns-a", entry: { type: "grant", kind: "lock", token: "tok-2", holds: [{ descriptor: "k1", mode: "shared", fencingToken: 9 }, { descriptor: "k2", mode: "exclusive", fencingToken: 10 }], allOrNone: false, max: 2, waitedMs: 12, next: 11, clientDescription: "worker 3" } };
  const release = { ns: "ns-a", entry: { type: "release", token: "tok-1", reason: "unlock" } };
  const roundTrip = (e: unknown): unknown => expandEntry(JSON.parse(JSON.stringify(compactEntry(e))));

  it("a release and a lock grant travel as arrays and come back exactly", () => {
    for (const e of [grant, bare, release]) {
      expect(Array.isArray(compactEntry(e))).toBe(true);
      expect(roundTrip(e)).toEqual(e);
    }
    expect(JSON.stringify(compactEntry(grant)).length).toBeLessThan(JSON.stringify(grant).length * 0.6);
  });

  it("any other entry, or one with a field the compact forms do not carry, travels as it is", () => {
    const others = [
      { ns: "ns-a", entry: { ...grant.entry, waiter: 4 } },
      { ns: "ns-a", entry: { ...grant.entry, holds: [{ descriptor: "p", mode: "permit", fencingToken: 3, limit: 2 }] } },
      { ns: "ns-a", entry: { ...grant.entry, specs: [{ descriptor: "p", mode: "permit", limit: 2 }] } },
      { ns: "ns-a", entry: { type: "grant", kind: "immutable", token: "i", startTimestamp: 5, next: 6 } },
      { ns: "ns-a", entry: { ...release.entry, extra: 1 } },
      { ns: "ns-a", entry: { type: "waiter-ended", serial: 3, reason: "timeout" } },
      { ns: "ns-a", entry: release.entry, more: true },
      { handOver: true },
    ];
    for (const e of others) {
      expect(compactEntry(e)).toBe(e);
      expect(roundTrip(e)).toEqual(e);
    }
  });

  it("an entries message carries compact entries; the standby's side expands them before the replica store", () => {
    const value = toStandbyValue({ kind: "entries", stream, fromSeq: 0, entries: [grant, release, { handOver: true }] }, stream) as { entries: unknown[] };
    expect(value.entries.map(Array.isArray)).toEqual([true, true, false]);
    const parsed = parseReplicationMessage(JSON.parse(JSON.stringify(value)), 1, stream);
    expect(expandEntries(parsed)).toEqual({ kind: "entries", stream, fromSeq: 0, entries: [grant, release, { handOver: true }] });
  });
});
