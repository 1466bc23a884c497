import type { Logger } from "./logger.js";
import { requireDependency } from "./require-dependency.js";

/**
 * The logger a client uses when given none: pino at level `warn` on stderr, named
 * `leasehold-client`, so warnings are JSON lines as the server's logs are. pino is loaded here, on
 * first use, rather than imported (see {@link requireDependency}: it keeps the client bundleable).
 */
export function createDefaultLogger(): Logger {
  const { pino } = requireDependency("pino") as typeof import("pino");
  return pino({ name: "leasehold-client", level: "warn" }, process.stderr);
}
