import { Writable } from "node:stream";
import { pino, type Logger } from "pino";

/** A pino logger whose JSON lines are collected in `lines` (synchronously). */
export function captureLogger(): { logger: Logger; lines: Record<string, unknown>[]; text: () => string } {
  const lines: Record<string, unknown>[] = [];
  const raw: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      for (const line of chunk.toString("utf8").split("\n")) {
        if (line.trim() === "") continue;
        raw.push(line);
        lines.push(JSON.parse(line) as Record<string, unknown>);
      }
      callback();
    },
  });
  return { logger: pino({ level: "debug" }, stream), lines, text: () => raw.join("\n") };
}
