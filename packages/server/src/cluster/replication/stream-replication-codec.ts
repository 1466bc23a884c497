import { refusalOf, type ReplicationAck, type ReplicationMessage, type StreamIdentity } from "./replication-wire.js";

/**
 * What the frames of the replication stream (`leasehold-replication/2`, stream-frames.ts) hold,
 * each way:
 * - to the standby, one message per frame, the JSON of a replication POST (replication-wire.ts),
 *   except that an entries message whose stream is the one the connection's previous message named
 *   leaves `stream` out (it is most of a lone grant's bytes, and the same for the whole connection),
 *   and the entries a lock + unlock pair makes travel as arrays rather than objects
 *   ({@link compactEntry}: the keys were half of their JSON);
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
  if (message.kind !== "entries") return message;
  const entries = message.entries.map(compactEntry);
  if (previous === null || !sameStream(previous, message.stream)) return { kind: "entries", stream: message.stream, fromSeq: message.fromSeq, entries };
  return { kind: "entries", fromSeq: message.fromSeq, entries };
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

/** Tag of a release entry's compact form: `[0, ns, token, reason]`. */
const RELEASE = 0;
/**
 * Tag of a lock grant's compact form (not a waiter's): `[1, ns, token, holds, allOrNone, max,
 * waitedMs, next, requestId, specs, clientDescription]`, each hold `[descriptor, mode,
 * fencingToken]`, each spec `[descriptor, mode]`, `null` for an optional field that is absent.
 */
const LOCK_GRANT = 1;
const GRANT_KEYS = new Set(["type", "kind", "token", "holds", "allOrNone", "max", "waitedMs", "requestId", "specs", "clientDescription", "next"]);

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const optional = (v: unknown): unknown => (v === undefined ? null : v);

/** Pairs of an array of objects with exactly the keys `a` and `b` (and `c` when given), or `null` when one is not. */
function rows(list: unknown, a: string, b: string, c?: string): unknown[][] | null {
  if (!Array.isArray(list)) return null;
  const out: unknown[][] = [];
  for (const item of list) {
    if (!isObj(item)) return null;
    let keys = 0;
    for (const k in item) if (Object.hasOwn(item, k)) keys++;
    if (keys !== (c === undefined ? 2 : 3) || !(a in item) || !(b in item) || (c !== undefined && !(c in item))) return null;
    out.push(c === undefined ? [item[a], item[b]] : [item[a], item[b], item[c]]);
  }
  return out;
}

/**
 * The compact form of a shard entry (`{ ns, entry }`) the stream sends instead of its JSON object,
 * for the two a lock + unlock pair makes: a release, and a lock grant that ends no wait. Any other
 * entry, or one with a field these forms do not carry, travels as it is (an object), so
 * {@link expandEntry} gives back exactly the entry.
 */
export function compactEntry(shardEntry: unknown): unknown {
  if (!isObj(shardEntry) || typeof shardEntry.ns !== "string" || !isObj(shardEntry.entry)) return shardEntry;
  const e = shardEntry.entry;
  let keys = 0;
  for (const k in shardEntry) if (Object.hasOwn(shardEntry, k)) keys++;
  if (keys !== 2) return shardEntry;
  keys = 0;
  for (const k in e) {
    if (!Object.hasOwn(e, k)) continue;
    keys++;
    if (e.type === "grant" && !GRANT_KEYS.has(k)) return shardEntry;
  }
  if (e.type === "release" && keys === 3 && typeof e.token === "string" && typeof e.reason === "string") return [RELEASE, shardEntry.ns, e.token, e.reason];
  if (e.type !== "grant" || e.kind !== "lock" || typeof e.token !== "string") return shardEntry;
  const holds = rows(e.holds, "descriptor", "mode", "fencingToken");
  const specs = e.specs === undefined ? null : rows(e.specs, "descriptor", "mode");
  if (holds === null || (e.specs !== undefined && specs === null)) return shardEntry;
  return [LOCK_GRANT, shardEntry.ns, e.token, holds, e.allOrNone, e.max, e.waitedMs, e.next, optional(e.requestId), specs, optional(e.clientDescription)];
}

/** The shard entry a compact form stands for ({@link compactEntry}); anything else as it is (the engine checks it). */
export function expandEntry(value: unknown): unknown {
  if (!Array.isArray(value)) return value;
  if (value[0] === RELEASE && value.length === 4) return { ns: value[1], entry: { type: "release", token: value[2], reason: value[3] } };
  if (value[0] !== LOCK_GRANT || value.length !== 11 || !Array.isArray(value[3])) return value;
  const [, ns, token, holds, allOrNone, max, waitedMs, next, requestId, specs, clientDescription] = value as unknown[];
  const entry: Obj = {
    type: "grant",
    kind: "lock",
    token,
    holds: (holds as unknown[]).map((h) => (Array.isArray(h) ? { descriptor: h[0], mode: h[1], fencingToken: h[2] } : h)),
    allOrNone,
    max,
    waitedMs,
    next,
  };
  if (requestId !== null) entry.requestId = requestId;
  if (specs !== null) entry.specs = Array.isArray(specs) ? specs.map((s) => (Array.isArray(s) ? { descriptor: s[0], mode: s[1] } : s)) : specs;
  if (clientDescription !== null) entry.clientDescription = clientDescription;
  return { ns, entry };
}

/** `message` with its compact entries expanded ({@link expandEntry}), as the replica store takes it. */
export function expandEntries(message: ReplicationMessage): ReplicationMessage {
  if (message.kind !== "entries" || !message.entries.some(Array.isArray)) return message;
  return { ...message, entries: message.entries.map(expandEntry) };
}
