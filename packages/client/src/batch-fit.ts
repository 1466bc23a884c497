import { LIMITS, type LockRequest } from "@leasehold/protocol";

/** `{"requests":[]}`: the envelope around a batch's entries. */
const ENVELOPE_BYTES = 16;
/** Every field of a lock request but its strings, written out, with room to spare. */
const REQUEST_FIXED_BYTES = 160;
/** One lock spec but its descriptor (`{"descriptor":"","mode":"exclusive","limit":1000000}`), with room to spare. */
const LOCK_FIXED_BYTES = 64;
/** The most UTF-8 bytes JSON can spend on one UTF-16 code unit (`\uXXXX`). */
const MAX_BYTES_PER_UNIT = 6;

/** A queued batch entry: only its request matters here. */
export interface Queued {
  readonly request: LockRequest;
}

const stringBound = (value: unknown): number =>
  value === undefined ? 0 : typeof value === "string" ? value.length * MAX_BYTES_PER_UNIT : Number.POSITIVE_INFINITY;

/**
 * An upper bound on the bytes `request` takes in a batch body, computed without encoding it (an
 * entry of a malformed shape gets `Infinity`, so it is measured exactly instead).
 */
function upperBound(request: LockRequest): number {
  let bytes = REQUEST_FIXED_BYTES + stringBound(request.requestId) + stringBound(request.clientDescription);
  const locks: unknown = request.locks;
  if (!Array.isArray(locks)) return bytes;
  for (let i = 0; i < locks.length; i++) {
    const lock: unknown = locks[i];
    bytes += LOCK_FIXED_BYTES + (typeof lock === "object" && lock !== null ? stringBound((lock as { descriptor?: unknown }).descriptor) : Number.POSITIVE_INFINITY);
  }
  return bytes;
}

const exactBytes = (request: LockRequest): number => Buffer.byteLength(JSON.stringify(request) ?? "null");

/**
 * How many of the first `count` requests fit in one `lock-batch` body of at most `maxBytes`
 * (default: the protocol's 1 MiB; the server answers 413 to anything larger and runs none of it).
 * At least 1: a request too large on its own still leaves alone, and its caller gets the server's
 * `PAYLOAD_TOO_LARGE`, exactly as a single `lock` would. Typical entries are a few hundred bytes,
 * so a cheap upper bound settles almost every batch; only a batch whose bound exceeds the limit is
 * encoded entry by entry to find the exact cut.
 */
export function entriesThatFit(entries: readonly Queued[], count: number, maxBytes: number = LIMITS.maxBodyBytes): number {
  let bound = ENVELOPE_BYTES;
  for (let i = 0; i < count; i++) {
    bound += upperBound(entries[i]!.request) + 1;
    if (bound > maxBytes) return exactFit(entries, count, maxBytes);
  }
  return count;
}

function exactFit(entries: readonly Queued[], count: number, maxBytes: number): number {
  let total = ENVELOPE_BYTES;
  for (let i = 0; i < count; i++) {
    total += exactBytes(entries[i]!.request) + (i > 0 ? 1 : 0);
    if (total > maxBytes) return Math.max(1, i);
  }
  return count;
}
