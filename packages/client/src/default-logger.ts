import type { Logger } from "./logger.js";
import { loadPino } from "./require-dependency.js";

/**
 * The logger a client uses when given none: pino at level `warn` on stderr, named
 * `leasehold-client`, so warnings are JSON lines as the server's logs are. pino is loaded here, on
 * first use, rather than imported (see {@link loadPino}: it keeps the client bundleable).
 */
export function createDefaultLogger(): Logger {
  const { pino } = loadPino();
  return pino({ name: "leasehold-client", level: "warn" }, process.stderr);
}
