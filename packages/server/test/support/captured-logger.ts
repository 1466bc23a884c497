import { Writable } from "node:stream";
import pino, { type Logger } from "pino";

/** A pino logger at `level` whose lines are parsed into `lines`, for tests that assert on the log. */
export function capturedLogger(level = "info"): { readonly logger: Logger; readonly lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const logger = pino(
    { level },
    new Writable({
      write(chunk: Buffer, _enc, done) {
        for (const line of chunk.toString("utf8").split("\n").filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>);
        done();
      },
    }),
  );
  return { logger, lines };
}
