import type { Logger } from "pino";
import type { Route } from "./match-route.js";

/**
 * The namespace a request named, for the access log: decoded when it decodes, cut to 80
 * characters either way (a bad one is logged as sent, so the log shows what the client did).
 */
export function loggedNamespace(route: Route): string | undefined {
  if (!("rawNamespace" in route)) return undefined;
  const raw = route.rawNamespace;
  try {
    return decodeURIComponent(raw).slice(0, 80);
  } catch {
    return raw.slice(0, 80);
  }
}

/**
 * One access-log line (docs/operations.md "Logs"): at `debug`, operation, namespace, status and
 * duration; at `trace`, plus `detail` (what the request carried, tokens only as fingerprints).
 * Never a token or a bearer credential. The caller checks the level once per request and calls
 * this only when debug is on, so the info-level hot path pays one comparison.
 */
export function logAccess(logger: Logger, operation: string, route: Route, status: number, seconds: number, detail: object | null): void {
  const line = {
    operation,
    namespace: loggedNamespace(route),
    status,
    durationMs: Math.round(seconds * 1e6) / 1e3,
  };
  if (detail !== null) logger.trace({ ...line, detail }, "request");
  else logger.debug(line, "request");
}
