import { LeaseholdError } from "@leasehold/protocol";

const decoder = new TextDecoder("utf-8", { fatal: true });

/** Line and column (both 1-based) of a character offset, so people can find the spot in an editor. */
function lineAndColumn(text: string, position: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < position && i < text.length; i++) {
    if (text.charCodeAt(i) === 10) {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, column: position - lineStart + 1 };
}

/**
 * Decode a request body as UTF-8 and parse it as JSON. Failures are `INVALID_ARGUMENT` with a
 * message that says where parsing stopped (character position, line and column), because
 * "invalid JSON" alone sends people hunting through a large body.
 */
export function parseJsonBody(body: Buffer): unknown {
  let text: string;
  try {
    text = decoder.decode(body);
  } catch {
    throw new LeaseholdError("INVALID_ARGUMENT", "request body is not valid UTF-8", { path: "(body)" });
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    // V8 reports "... at position N" for most failures and "Unexpected end of JSON input" for truncation.
    const match = /position (\d+)/.exec(reason);
    const position = match ? Number(match[1]) : text.length;
    const { line, column } = lineAndColumn(text, position);
    const cleaned = reason.replace(/\s*\(line \d+ column \d+\)$/, "");
    throw new LeaseholdError(
      "INVALID_ARGUMENT",
      `request body is not valid JSON: ${cleaned} (line ${line}, column ${column})`,
      { path: "(body)", position, line, column },
    );
  }
}
