import { pino, type Logger } from "pino";

/** A pino logger whose JSON lines are kept in memory, parsed, for the test to inspect. */
export interface CapturedLogger {
  /** Pass it as a client's `logger`. */
  readonly logger: Logger;
  /** Every line written so far, parsed. */
  readonly lines: Record<string, unknown>[];
  /** Every line written so far, as written (to search for text that must never appear). */
  readonly raw: string[];
}

/** A logger at `level` (default `info`, so nothing the client says at `warn` is missed) that captures its lines. */
export function capturedLogger(level = "info"): CapturedLogger {
  const lines: Record<string, unknown>[] = [];
  const raw: string[] = [];
  const destination = {
    write(text: string): void {
      raw.push(text);
      lines.push(JSON.parse(text) as Record<string, unknown>);
    },
  };
  return { logger: pino({ level }, destination), lines, raw };
}
