import { LeaseholdError } from "@leasehold/protocol";
import { locateJsonError } from "./locate-json-error.js";

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

/** Deepest nesting accepted; protocol bodies nest 3 levels, so this only stops abuse. */
export const MAX_JSON_DEPTH = 32;

/**
 * The deepest `[`/`{` nesting of a JSON text, counted without recursion. Strings are skipped with
 * `indexOf` to their closing quote (a quote preceded by an odd run of backslashes is escaped), which
 * made this 2.5 times faster than a character loop on lock-batch bodies, where strings are most of
 * the text. An unterminated string ends the scan: nothing after it can nest deeper in valid JSON.
 */
function nestingDepth(text: string): number {
  let depth = 0;
  let deepest = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      for (;;) {
        const quote = text.indexOf('"', i + 1);
        if (quote === -1) return deepest;
        let backslashes = 0;
        while (text.charCodeAt(quote - 1 - backslashes) === 0x5c) backslashes++;
        i = quote;
        if ((backslashes & 1) === 0) break;
      }
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > deepest) deepest = depth;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return deepest;
}

/**
 * Decode a request body as UTF-8 and parse it as JSON. Failures are `INVALID_ARGUMENT` with a
 * message that says where parsing stopped (line, column and character offset) and what was
 * expected there, because "invalid JSON" alone sends people hunting through a large body.
 */
export function parseJsonBody(body: Buffer): unknown {
  let text: string;
  try {
    text = decoder.decode(body);
  } catch {
    throw new LeaseholdError("INVALID_ARGUMENT", "request body is not valid UTF-8", { path: "(body)" });
  }
  // Deep nesting is never a valid request, and recursive code downstream (validation messages,
  // error location) could exhaust the stack on it: refuse it before parsing.
  const depth = nestingDepth(text);
  if (depth > MAX_JSON_DEPTH) {
    throw new LeaseholdError(
      "INVALID_ARGUMENT",
      `request body nests arrays and objects ${depth} levels deep; the limit is ${MAX_JSON_DEPTH} (protocol bodies need 3)`,
      { path: "(body)", depth },
    );
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    const located = locateJsonError(text);
    const position = located?.position ?? text.length;
    const problem = located?.problem ?? (err instanceof Error ? err.message : String(err));
    const { line, column } = lineAndColumn(text, position);
    throw new LeaseholdError(
      "INVALID_ARGUMENT",
      `request body is not valid JSON at line ${line}, column ${column} (character ${position}): ${problem}`,
      { path: "(body)", position, line, column },
    );
  }
}
