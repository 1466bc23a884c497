import { StringDecoder } from "node:string_decoder";
import { CompactLineReader, LeaseholdError, type LockBatchResultListener, type LockRequest } from "@leasehold/protocol";

/**
 * Reads a `lock-batch` answer body as its chunks arrive and hands each entry's line to `onLine`
 * the moment it is complete, so an entry's caller hears its answer without waiting for slower
 * entries. A line may be split across chunks (and a character across bytes, hence the decoder);
 * JSON text never holds a raw newline, so splitting on `\n` is exact. Compact lines (the batch was
 * sent with `compact: true`) are completed from `requests`, the entries as sent, so `onLine` always
 * receives full lines. One reader per answer.
 */
export class LockBatchLineReader {
  readonly #decoder = new StringDecoder("utf8");
  readonly #lines: CompactLineReader;
  readonly #onLine: LockBatchResultListener;
  #pending = "";

  constructor(requests: readonly LockRequest[], onLine: LockBatchResultListener) {
    this.#lines = new CompactLineReader(requests);
    this.#onLine = onLine;
  }

  /**
   * The next chunk of the body. Throws `BAD_RESPONSE` at the first line that is not JSON or not a
   * protocol line, after the lines before it were handed on; the caller then stops reading.
   */
  push(chunk: Buffer): void {
    let pending = this.#pending + this.#decoder.write(chunk);
    // Lines are found by position; what follows the last newline is kept once per chunk.
    let from = 0;
    let end = pending.indexOf("\n");
    while (end !== -1) {
      if (end > from) {
        const text = pending.slice(from, end);
        if (text.trim() !== "") {
          const line = this.#lines.read(parseJson(text));
          if (line !== undefined) this.#onLine(line);
        }
      }
      from = end + 1;
      end = pending.indexOf("\n", from);
    }
    if (from > 0) pending = pending.slice(from);
    this.#pending = pending;
  }

  /** The body ended: throws `BAD_RESPONSE` if it ended in the middle of a line. */
  end(): void {
    const rest = this.#pending + this.#decoder.end();
    if (rest.trim() !== "") throw new LeaseholdError("BAD_RESPONSE", "lock-batch: the answer ended in the middle of a line", { body: rest.slice(0, 200) });
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new LeaseholdError("BAD_RESPONSE", "lock-batch: a line of the answer is not JSON", { body: text.slice(0, 200) });
  }
}
