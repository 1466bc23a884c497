import { StringDecoder } from "node:string_decoder";
import { LeaseholdError, responseValidators, type LockBatchResultListener } from "@leasehold/protocol";

/**
 * Read a `lock-batch` answer body as it streams and hand each NDJSON line to `onLine` the moment
 * it is complete, so an entry's caller hears its answer without waiting for slower entries. A line
 * may be split across chunks (and a character across bytes, hence the decoder); JSON text never
 * holds a raw newline, so splitting on `\n` is exact. A line that is not JSON or not a protocol
 * line, or a body ending mid-line, rejects `BAD_RESPONSE`.
 */
export async function readLockBatchLines(body: AsyncIterable<Buffer | string>, onLine: LockBatchResultListener): Promise<void> {
  const decoder = new StringDecoder("utf8");
  let pending = "";
  for await (const chunk of body) {
    pending += typeof chunk === "string" ? chunk : decoder.write(chunk);
    // Lines are found by position; what follows the last newline is kept once per chunk.
    let from = 0;
    let end = pending.indexOf("\n");
    while (end !== -1) {
      if (end > from) {
        const text = pending.slice(from, end);
        if (text.trim() !== "") onLine(parseLine(text));
      }
      from = end + 1;
      end = pending.indexOf("\n", from);
    }
    if (from > 0) pending = pending.slice(from);
  }
  pending += decoder.end();
  if (pending.trim() !== "") throw new LeaseholdError("BAD_RESPONSE", "lock-batch: the answer ended in the middle of a line", { body: pending.slice(0, 200) });
}

function parseLine(text: string): Parameters<LockBatchResultListener>[0] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new LeaseholdError("BAD_RESPONSE", "lock-batch: a line of the answer is not JSON", { body: text.slice(0, 200) });
  }
  if (!responseValidators["lock-batch"].check(parsed)) {
    throw new LeaseholdError("BAD_RESPONSE", "lock-batch: a line of the answer does not match the protocol", { body: text.slice(0, 200) });
  }
  return parsed;
}
