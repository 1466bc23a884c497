import { StringDecoder } from "node:string_decoder";
import { CompactLineReader, LeaseholdError, type LockBatchResultListener, type LockRequest } from "@leasehold/protocol";

/**
 * Read a `lock-batch` answer body as it streams and hand each entry's line to `onLine` the moment
 * it is complete, so an entry's caller hears its answer without waiting for slower entries. A line
 * may be split across chunks (and a character across bytes, hence the decoder); JSON text never
 * holds a raw newline, so splitting on `\n` is exact. Compact lines (the batch was sent with
 * `compact: true`) are completed from `requests`, the entries as sent, so `onLine` always receives
 * full lines. A line that is not JSON or not a protocol line, or a body ending mid-line, rejects
 * `BAD_RESPONSE`.
 */
export async function readLockBatchLines(
  body: AsyncIterable<Buffer | string>,
  requests: readonly LockRequest[],
  onLine: LockBatchResultListener,
): Promise<void> {
  const decoder = new StringDecoder("utf8");
  const reader = new CompactLineReader(requests);
  let pending = "";
  for await (const chunk of body) {
    pending += typeof chunk === "string" ? chunk : decoder.write(chunk);
    // Lines are found by position; what follows the last newline is kept once per chunk.
    let from = 0;
    let end = pending.indexOf("\n");
    while (end !== -1) {
      if (end > from) {
        const text = pending.slice(from, end);
        if (text.trim() !== "") {
          const line = reader.read(parseJson(text));
          if (line !== undefined) onLine(line);
        }
      }
      from = end + 1;
      end = pending.indexOf("\n", from);
    }
    if (from > 0) pending = pending.slice(from);
  }
  pending += decoder.end();
  if (pending.trim() !== "") throw new LeaseholdError("BAD_RESPONSE", "lock-batch: the answer ended in the middle of a line", { body: pending.slice(0, 200) });
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new LeaseholdError("BAD_RESPONSE", "lock-batch: a line of the answer is not JSON", { body: text.slice(0, 200) });
  }
}
