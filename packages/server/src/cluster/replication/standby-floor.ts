import type { StandbyFloor } from "../test-breaks.js";
import { parseReplicationMessage, type ReplicationMessage, type StreamIdentity } from "./replication-wire.js";
import { FrameError } from "./stream-frames.js";
import { expandEntries } from "./stream-replication-codec.js";

/**
 * BENCHMARK ONLY (`LEASEHOLD_TEST_STANDBY_FLOOR`, test-breaks.ts): how a floor standby answers the
 * frames of the replication stream without applying them. `auth` reads an entries message's
 * acknowledgement from its bytes ({@link entriesAckOf}), so its cost is the stream's framing and
 * MACs and one pass over the bytes, nothing more; `decode` decodes every message as the real
 * standby does. Either answers an entries message by its last sequence number and hands anything
 * else (a snapshot) to the replica store.
 */

/** What a floor standby does with one frame: answered (and the stream it named, if it named one), or handed to the store. */
export type FloorOutcome =
  | { readonly ackedSeq: number; readonly stream: StreamIdentity | null }
  | { readonly ackedSeq: null; readonly message: ReplicationMessage };

/**
 * The floor's answer to one frame of stream `shard` whose previous message named `previous`:
 * `frame` is the payload's bytes under `auth` (the frame reader's raw mode) and its decoded JSON
 * under `decode`. Throws what the real standby's decoding throws (a `ReplicationRefusal`), and a
 * {@link FrameError} for bytes that are not JSON.
 */
export function floorAnswer(floor: StandbyFloor, frame: unknown, shard: number, previous: StreamIdentity | null): FloorOutcome {
  if (floor === "auth") {
    const ackedSeq = entriesAckOf(frame as Buffer);
    if (ackedSeq !== null) return { ackedSeq, stream: null };
  }
  const message = expandEntries(parseReplicationMessage(floor === "auth" ? decodeJson(frame as Buffer) : frame, shard, previous));
  if (message.kind !== "entries") return { ackedSeq: null, message };
  return { ackedSeq: message.fromSeq + message.entries.length, stream: message.stream };
}

/** The JSON of a payload the byte reader did not recognise; not JSON fails like the frame reader's own check. */
function decodeJson(payload: Buffer): unknown {
  try {
    return JSON.parse(payload.toString("utf8"));
  } catch {
    throw new FrameError("a frame is not JSON");
  }
}

const HEAD = Buffer.from('{"kind":"entries","fromSeq":');
const ENTRIES = Buffer.from(',"entries":[');
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;

/**
 * The sequence number acknowledging the entries message whose JSON is `payload` (its `fromSeq`
 * plus its number of entries), or `null` when it is not a continuing message of compact entries:
 * one pass over the entries' bytes counts the arrays that start at the entries array's own depth,
 * skipping strings (and the escapes in them); an object there (a waiter, a hand-over, a grant with
 * more fields) answers `null`, as does anything malformed. Not a parser: it reads only the form the
 * leader's codec writes for a message that continues its stream and whose entries are all compact
 * (stream-replication-codec.ts: `{"kind":"entries","fromSeq":N,"entries":[[0,"…"],[1,"…"]…]}`).
 */
export function entriesAckOf(payload: Buffer): number | null {
  if (payload.length < HEAD.length + ENTRIES.length + 1 || payload.compare(HEAD, 0, HEAD.length, 0, HEAD.length) !== 0) return null;
  let at = HEAD.length;
  let fromSeq = 0;
  for (; at < payload.length && payload[at]! >= 0x30 && payload[at]! <= 0x39; at++) fromSeq = fromSeq * 10 + payload[at]! - 0x30;
  if (at === HEAD.length || payload.compare(ENTRIES, 0, ENTRIES.length, at, at + ENTRIES.length) !== 0) return null;
  let entries = 0;
  // Inside the entries array: depth 1.
  let depth = 1;
  for (at += ENTRIES.length; at < payload.length; at++) {
    const byte = payload[at]!;
    if (byte === QUOTE) {
      for (at++; at < payload.length && payload[at] !== QUOTE; at++) if (payload[at] === BACKSLASH) at++;
      continue;
    }
    if (byte === OPEN_ARRAY || byte === OPEN_OBJECT) {
      if (depth === 1) {
        if (byte === OPEN_OBJECT) return null;
        entries++;
      }
      depth++;
    } else if (byte === CLOSE_ARRAY || byte === CLOSE_OBJECT) {
      depth--;
      if (depth === 0) return fromSeq + entries;
    }
  }
  return null;
}
