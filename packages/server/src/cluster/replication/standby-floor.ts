/**
 * BENCHMARK ONLY (`LEASEHOLD_TEST_STANDBY_FLOOR=auth`, test-breaks.ts): the acknowledgement of an
 * entries message read from its bytes, without decoding it, so the floor standby's cost is the
 * stream's framing and MACs and nothing else. Not a parser: it reads only the form the leader's
 * codec writes for a message that continues its stream and whose entries are all compact
 * (stream-replication-codec.ts: `{"kind":"entries","fromSeq":N,"entries":[[0,"…],[1,"…]…]}`), and
 * answers `null` for anything else, which the floor then decodes.
 */

const HEAD = Buffer.from('{"kind":"entries","fromSeq":');
const ENTRIES = Buffer.from(',"entries":[');
/** A compact release or lock grant starts with its tag and then its namespace, a string. */
const RELEASE_START = Buffer.from('[0,"');
const GRANT_START = Buffer.from('[1,"');
/** An entry in object form (a waiter, a hand-over, a grant with more fields): not counted here. */
const OBJECT_ENTRY = Buffer.from('{"ns"');

/** Occurrences of `pattern` in `bytes[from, end)`. */
function count(bytes: Buffer, pattern: Buffer, from: number, end: number): number {
  let n = 0;
  for (let at = bytes.indexOf(pattern, from); at !== -1 && at < end; at = bytes.indexOf(pattern, at + pattern.length)) n++;
  return n;
}

/**
 * The sequence number acknowledging the entries message whose JSON is `payload` (its `fromSeq`
 * plus its number of entries), or `null` when it is not a continuing message of compact entries.
 * An unescaped `"` cannot occur inside a JSON string, so `[0,"` and `[1,"` occur only where a
 * compact entry starts (no other array of the compact forms begins with a number then a string).
 */
export function entriesAckOf(payload: Buffer): number | null {
  if (payload.length < HEAD.length + ENTRIES.length + 1 || payload.compare(HEAD, 0, HEAD.length, 0, HEAD.length) !== 0) return null;
  let at = HEAD.length;
  let fromSeq = 0;
  for (; at < payload.length && payload[at]! >= 0x30 && payload[at]! <= 0x39; at++) fromSeq = fromSeq * 10 + payload[at]! - 0x30;
  if (at === HEAD.length || payload.compare(ENTRIES, 0, ENTRIES.length, at, at + ENTRIES.length) !== 0) return null;
  const start = at + ENTRIES.length;
  if (payload.indexOf(OBJECT_ENTRY, start) !== -1) return null;
  return fromSeq + count(payload, RELEASE_START, start, payload.length) + count(payload, GRANT_START, start, payload.length);
}
