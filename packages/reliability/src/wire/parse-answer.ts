/** The first HTTP/1.1 answer found in the bytes read from a connection. */
export interface ParsedAnswer {
  readonly status: number;
  readonly head: string;
  readonly headers: Record<string, string>;
  /** The body so far (de-chunked), and whether it is complete. */
  readonly body: Buffer;
  readonly complete: boolean;
}

/** Remove chunked transfer coding from `data`; `complete` once the last chunk and trailer arrived. */
function dechunk(data: Buffer): { body: Buffer; complete: boolean } {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const eol = data.indexOf("\r\n", at);
    if (eol < 0) return { body: Buffer.concat(parts), complete: false };
    const size = Number.parseInt(data.subarray(at, eol).toString("latin1").split(";", 1)[0] ?? "", 16);
    if (!Number.isFinite(size)) return { body: Buffer.concat(parts), complete: false };
    // The last chunk: complete once the (empty) trailer section has ended.
    if (size === 0) return { body: Buffer.concat(parts), complete: data.indexOf("\r\n\r\n", eol) >= 0 };
    if (data.length < eol + 2 + size + 2) return { body: Buffer.concat(parts), complete: false };
    parts.push(data.subarray(eol + 2, eol + 2 + size));
    at = eol + 2 + size + 2;
  }
}

/**
 * Parse the first answer in `data`, or null while its head is incomplete. The body is de-chunked;
 * `complete` once its content-length or last chunk arrived (or, with neither, once `ended`).
 */
export function parseAnswer(data: Buffer, ended: boolean): ParsedAnswer | null {
  const end = data.indexOf("\r\n\r\n");
  if (end < 0) return null;
  const head = data.subarray(0, end).toString("latin1");
  const lines = head.split("\r\n");
  const match = /^HTTP\/1\.[01] (\d{3})/.exec(lines[0] ?? "");
  if (!match) return null;
  const headers: Record<string, string> = {};
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(":");
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  const rest = data.subarray(end + 4);
  if (/chunked/i.test(headers["transfer-encoding"] ?? "")) {
    const { body, complete } = dechunk(rest);
    return { status: Number(match[1]), head, headers, body, complete };
  }
  const length = headers["content-length"] === undefined ? Number.NaN : Number(headers["content-length"]);
  if (Number.isNaN(length)) return { status: Number(match[1]), head, headers, body: rest, complete: ended };
  return { status: Number(match[1]), head, headers, body: rest.subarray(0, length), complete: rest.length >= length };
}
