/** A Redis reply as the benchmark reads it (RESP2): simple and bulk strings as text, nil as null. */
export type RespValue = string | number | null | RespError | RespValue[];

/** An error reply (`-ERR ...`): a value, not a throw, so one bad reply in a pipeline is seen in place. */
export class RespError extends Error {}

/**
 * One or more commands as RESP arrays of bulk strings, in one buffer: what goes to the socket in
 * one write, so a pipelined `SET ... NX PX` and `WAIT` leave together (one syscall, one packet).
 */
export function encodeCommands(commands: readonly (readonly (string | number)[])[]): Buffer {
  const parts: string[] = [];
  for (const command of commands) {
    parts.push(`*${command.length}\r\n`);
    for (const arg of command) {
      const text = String(arg);
      parts.push(`$${Buffer.byteLength(text)}\r\n${text}\r\n`);
    }
  }
  return Buffer.from(parts.join(""));
}

/** Marks a reply not yet complete in the buffer. */
const INCOMPLETE = Symbol("incomplete");

/**
 * Reads RESP2 replies from a byte stream that arrives in chunks of any size: `push` a chunk, get
 * back every reply it completed, in order. Keeps the unread tail until the next chunk.
 */
export class RespReader {
  private buffer: Buffer = Buffer.alloc(0);
  private offset = 0;

  /** Add `chunk`; answers the replies now complete, oldest first (none when a reply is still partial). */
  push(chunk: Buffer): RespValue[] {
    this.buffer = this.offset < this.buffer.length ? Buffer.concat([this.buffer.subarray(this.offset), chunk]) : chunk;
    this.offset = 0;
    const replies: RespValue[] = [];
    for (;;) {
      const start = this.offset;
      const value = this.read();
      if (value === INCOMPLETE) {
        this.offset = start;
        return replies;
      }
      replies.push(value);
    }
  }

  /** The line from `offset` to its CRLF (moving past it), or INCOMPLETE. */
  private line(): string | typeof INCOMPLETE {
    const end = this.buffer.indexOf("\r\n", this.offset);
    if (end < 0) return INCOMPLETE;
    const text = this.buffer.toString("utf8", this.offset, end);
    this.offset = end + 2;
    return text;
  }

  private read(): RespValue | typeof INCOMPLETE {
    if (this.offset >= this.buffer.length) return INCOMPLETE;
    const type = String.fromCharCode(this.buffer[this.offset]!);
    this.offset++;
    const head = this.line();
    if (head === INCOMPLETE) return INCOMPLETE;
    switch (type) {
      case "+":
        return head;
      case "-":
        return new RespError(head);
      case ":":
        return Number(head);
      case "$": {
        const length = Number(head);
        if (length < 0) return null;
        if (this.buffer.length < this.offset + length + 2) return INCOMPLETE;
        const text = this.buffer.toString("utf8", this.offset, this.offset + length);
        this.offset += length + 2;
        return text;
      }
      case "*": {
        const count = Number(head);
        if (count < 0) return null;
        const items: RespValue[] = [];
        for (let i = 0; i < count; i++) {
          const item = this.read();
          if (item === INCOMPLETE) return INCOMPLETE;
          items.push(item);
        }
        return items;
      }
      default:
        throw new Error(`not a RESP2 reply: type byte ${JSON.stringify(type)}`);
    }
  }
}
