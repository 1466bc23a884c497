import { refusalOf, type ReplicationAck, type ReplicationMessage, type StreamIdentity } from "./replication-wire.js";

/**
 * What the frames of the replication stream (`leasehold-replication/2`, stream-frames.ts) hold,
 * each way:
 * - to the standby, one message per frame, the JSON of a replication POST (replication-wire.ts),
 *   except that an entries message whose stream is the one the connection's previous message named
 *   leaves `stream` out (it is most of a lone grant's bytes, and the same for the whole connection);
 * - to the leader, one frame per batch of answers: a JSON array with the answer of each message the
 *   standby read in one go, in order: the acknowledged sequence number (a number), or the refusal
 *   (`{ "error": { code, message, details } }`), after which the standby ends the stream. One MAC
 *   and one write for a batch of answers, not one each.
 */

/** True when `a` and `b` name the same stream (the sender passes one object for a whole stream). */
export function sameStream(a: StreamIdentity, b: StreamIdentity): boolean {
  return (
    a === b ||
    (a.shard === b.shard &&
      a.epoch === b.epoch &&
      a.streamId === b.streamId &&
      a.leaderId === b.leaderId &&
      a.leaderIncarnation === b.leaderIncarnation &&
      a.standbyIncarnation === b.standbyIncarnation)
  );
}

/**
 * The frame value of `message` on a connection whose previous message named `previous` (`null`:
 * none yet): an entries message of that same stream without its `stream`.
 */
export function toStandbyValue(message: ReplicationMessage, previous: StreamIdentity | null): unknown {
  if (message.kind !== "entries" || previous === null || !sameStream(previous, message.stream)) return message;
  return { kind: "entries", fromSeq: message.fromSeq, entries: message.entries };
}

/** The answer of one message in a batch: its acknowledged sequence number, or its refusal's JSON. */
export type AnswerValue = number | { readonly error: unknown };

/** Each answer a leader reads in an answer frame: an acknowledgement, or the error its message is rejected with. */
export function readAnswers(origin: string, frame: unknown): (ReplicationAck | Error)[] {
  const values = Array.isArray(frame) ? (frame as unknown[]) : [frame];
  return values.map((value) => {
    if (typeof value === "number") return { ackedSeq: value };
    const body = typeof value === "object" && value !== null ? (value as { error?: unknown }) : {};
    return refusalOf(origin, body.error) ?? new Error(`the standby at ${origin} answered ${JSON.stringify(value)?.slice(0, 200)}`);
  });
}
