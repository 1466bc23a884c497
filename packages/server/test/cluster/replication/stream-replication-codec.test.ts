import { describe, expect, it } from "vitest";
import { parseReplicationMessage, ReplicationRefusal, type ReplicationMessage } from "../../../src/cluster/replication/replication-wire.js";
import { readAnswers, sameStream, toStandbyValue } from "../../../src/cluster/replication/stream-replication-codec.js";

const stream = { shard: 1, epoch: 3, leaderId: "L3", leaderIncarnation: "leader-inc", standbyIncarnation: "standby-inc", streamId: "s1" };
const entries: ReplicationMessage = { kind: "entries", stream, fromSeq: 4, entries: ["e5"] };

describe("what the replication stream's frames hold (leasehold-replication/2)", () => {
  it("an entries message of the connection's previous stream leaves its stream out; the standby reads it as that stream's", () => {
    const value = toStandbyValue(entries, { ...stream });
    expect(value).toEqual({ kind: "entries", fromSeq: 4, entries: ["e5"] });
    expect(parseReplicationMessage(JSON.parse(JSON.stringify(value)), 1, stream)).toEqual(entries);
  });

  it("the first message of a connection, a snapshot, and a message of another stream carry their stream", () => {
    expect(toStandbyValue(entries, null)).toBe(entries);
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
