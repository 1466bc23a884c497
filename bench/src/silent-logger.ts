import { pino, type Logger } from "pino";

/** A pino logger that writes nothing: benchmarks measure work, not logging. */
export function silentLogger(): Logger {
  return pino({ level: "silent" });
}
