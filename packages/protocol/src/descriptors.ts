import { LeaseholdError } from "./errors.js";
import { LIMITS } from "./limits.js";
import { utf8ByteLength } from "./utf8.js";

/**
 * Row and cell descriptors. Parts are joined by `\u0000`, so `rowLock("orders", "o-17")` is
 * `"orders\u0000o-17"`. To keep the encoding unambiguous a part never holds a raw `\u0000`:
 * in strings, `\u0001` is escaped as `\u0001\u0001` and `\u0000` as `\u0001\u0002`; byte parts
 * (`Uint8Array`) are written as `\u0001b` followed by lowercase hex, a form no escaped string
 * produces. A row descriptor therefore has exactly one separator and a cell descriptor two: they
 * never collide, and two different inputs never give the same descriptor.
 */
export type DescriptorPart = string | Uint8Array;

const SEPARATOR = "\u0000";
const ESCAPE = "\u0001";
const HEX = "0123456789abcdef";

function encodePart(part: DescriptorPart, where: string): string {
  if (part instanceof Uint8Array) {
    let out = `${ESCAPE}b`;
    for (const byte of part) out += HEX[byte >> 4]! + HEX[byte & 15]!;
    return out;
  }
  if (typeof part !== "string") {
    throw new LeaseholdError("INVALID_ARGUMENT", `${where} must be a string or a Uint8Array (got ${part === null ? "null" : typeof part})`, { path: where });
  }
  if (utf8ByteLength(part) < 0) {
    throw new LeaseholdError("INVALID_ARGUMENT", `${where} must be well-formed Unicode (it holds a lone surrogate)`, { path: where });
  }
  if (!part.includes(SEPARATOR) && !part.includes(ESCAPE)) return part;
  return part.replace(/[\u0000\u0001]/g, (c) => (c === ESCAPE ? ESCAPE + ESCAPE : ESCAPE + "\u0002"));
}

function encodeTable(table: string, helper: string): string {
  if (typeof table !== "string" || table.length === 0) {
    throw new LeaseholdError("INVALID_ARGUMENT", `${helper}: table must be a non-empty string`, { path: "table" });
  }
  return encodePart(table, `${helper}: table`);
}

function checkLength(descriptor: string, helper: string): string {
  const bytes = utf8ByteLength(descriptor);
  if (bytes > LIMITS.maxDescriptorBytes) {
    throw new LeaseholdError(
      "INVALID_ARGUMENT",
      `${helper}: the descriptor would be ${bytes} UTF-8 bytes; the limit is ${LIMITS.maxDescriptorBytes} (shorten the table, row or column)`,
      { path: "descriptor", bytes },
    );
  }
  return descriptor;
}

/** The descriptor of a whole row: conflicts with other locks on that row, never with cell locks. */
export function rowLock(table: string, row: DescriptorPart): string {
  return checkLength(encodeTable(table, "rowLock") + SEPARATOR + encodePart(row, "rowLock: row"), "rowLock");
}

/** The descriptor of one cell (row and column). */
export function cellLock(table: string, row: DescriptorPart, column: DescriptorPart): string {
  return checkLength(
    encodeTable(table, "cellLock") + SEPARATOR + encodePart(row, "cellLock: row") + SEPARATOR + encodePart(column, "cellLock: column"),
    "cellLock",
  );
}
