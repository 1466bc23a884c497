/**
 * BENCHMARK ONLY (`LEASEHOLD_TEST_STANDBY_FLOOR=auth`, test-breaks.ts): the acknowledgement of an
 * entries message read from its bytes, without decoding it, so the floor standby's cost is the
 * stream's framing and MACs and one pass over the bytes, nothing more. Not a parser: it reads only
 * the form the leader's codec writes for a message that continues its stream and whose entries are
 * all compact (stream-replication-codec.ts: `{"kind":"entries","fromSeq":N,"entries":[[0,"…"],[1,"…"]…]}`),
 * and answers `null` for anything else, which the floor then decodes.
 */

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
 * more fields) answers `null`, as does anything malformed.
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
