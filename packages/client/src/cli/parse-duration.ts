import { UsageError } from "./usage-error.js";

const UNITS_MS: Readonly<Record<string, number>> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 };

/**
 * Parse a duration flag the way `timeout(1)` reads one: a number with an optional unit (`ms`, `s`,
 * `m`, `h`; a bare number is seconds), or `inf`/`infinity` for no limit. Returns milliseconds.
 * Throws {@link UsageError} naming the flag on anything else.
 */
export function parseDuration(flag: string, value: string): number {
  if (/^inf(inity)?$/i.test(value)) return Infinity;
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(value);
  if (match === null) {
    throw new UsageError(`--${flag} must be a duration like 30s, 500ms, 2m, 1h or inf (got ${JSON.stringify(value)})`);
  }
  const ms = Number(match[1]) * (UNITS_MS[match[2] ?? "s"] ?? 1_000);
  if (!Number.isFinite(ms)) throw new UsageError(`--${flag} is too large (got ${JSON.stringify(value)})`);
  return Math.round(ms);
}
