import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { LeaseholdError } from "@leasehold/protocol";
import type { TimestampReserver } from "./timestamp-reserver.js";
import { writeFileAtomicSync } from "./write-file-atomic.js";

/** Name of the bound file inside the data directory. */
export const TIMESTAMP_BOUND_FILE = "timestamp-bound.json";

/** Default of {@link FileTimestampReserverOptions.reserve}. */
export const DEFAULT_TIMESTAMP_RESERVE = 1_000_000;

/** Options of {@link createFileTimestampReserver}. */
export interface FileTimestampReserverOptions {
  /** Directory of the bound file; created if missing. */
  readonly dataDir: string;
  /**
   * How far beyond what is needed each reservation reaches. Default 1,000,000: one small fsynced
   * write per million numbers keeps the disk off the hot path, and skipping at most a million
   * numbers at a crash costs nothing (they only need to increase).
   */
  readonly reserve?: number | undefined;
}

interface BoundFile {
  readonly version: 1;
  readonly namespaces: Record<string, number>;
}

/**
 * A {@link TimestampReserver} that keeps every namespace's bound in `<dataDir>/timestamp-bound.json`,
 * rewritten atomically at every reservation. The bound is always at or above every number handed
 * out, so a process restarted on the same directory (after a clean stop or a crash) resumes above
 * them all. A missing file means a fresh start; a corrupt one refuses to start rather than
 * silently reuse numbers.
 */
export function createFileTimestampReserver(options: FileTimestampReserverOptions): TimestampReserver {
  const reserveSize = options.reserve ?? DEFAULT_TIMESTAMP_RESERVE;
  if (!Number.isSafeInteger(reserveSize) || reserveSize < 1) {
    throw new RangeError(`timestampReserve must be a positive safe integer (got ${String(reserveSize)})`);
  }
  mkdirSync(options.dataDir, { recursive: true });
  const path = join(options.dataDir, TIMESTAMP_BOUND_FILE);
  const bounds = readBoundFile(path);

  const write = (): void => {
    const file: BoundFile = { version: 1, namespaces: Object.fromEntries(bounds) };
    writeFileAtomicSync(path, `${JSON.stringify(file)}\n`);
  };

  return {
    floor: (namespace) => bounds.get(namespace) ?? 0,
    reserve(namespace, upTo) {
      if (upTo > Number.MAX_SAFE_INTEGER) {
        throw new LeaseholdError("UNAVAILABLE", `namespace ${namespace} has used every safe integer timestamp`);
      }
      const previous = bounds.get(namespace);
      const bound = Math.min(Number.MAX_SAFE_INTEGER, Math.max(upTo, previous ?? 0) + reserveSize);
      bounds.set(namespace, bound);
      try {
        write();
      } catch (err) {
        // The bound on disk is still the old one, so numbers beyond it must not be handed out.
        if (previous === undefined) bounds.delete(namespace);
        else bounds.set(namespace, previous);
        throw new LeaseholdError("UNAVAILABLE", `cannot persist the timestamp bound in ${path}: ${String(err)}`, {}, { cause: err });
      }
      return bound;
    },
    persist: write,
  };
}

/**
 * Every namespace's bound in a bound file (empty when the file does not exist). Throws, naming the
 * file, when it is corrupt: numbers could repeat if it were guessed at.
 */
export function readBoundFile(path: string): Map<string, number> {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    if ((err as { code?: unknown }).code === "ENOENT") return new Map();
    throw err;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new Error(`${path} is not valid JSON; refusing to start, since timestamps could repeat`, { cause: err });
  }
  const namespaces = (parsed as Partial<BoundFile> | null)?.namespaces;
  if (typeof namespaces !== "object" || namespaces === null) {
    throw new Error(`${path} has no "namespaces" object; refusing to start, since timestamps could repeat`);
  }
  const bounds = new Map<string, number>();
  for (const [namespace, bound] of Object.entries(namespaces)) {
    if (!Number.isSafeInteger(bound) || (bound as number) < 0) {
      throw new Error(`${path}: the bound of namespace ${JSON.stringify(namespace)} is not a non-negative safe integer`);
    }
    bounds.set(namespace, bound as number);
  }
  return bounds;
}
