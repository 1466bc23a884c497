import { OPS } from "./requests.js";

const NAMESPACE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** What docs/protocol.md says a request target names; written independently of the server's router. */
export type RouteOf = "health" | "metrics" | "operation" | "inspection" | "status-page" | "unmatched";

/** The status page's files (docs/protocol.md "Activity feed and status page"): `GET /ui/<file>`. */
const STATUS_PAGE = ["/ui", "/ui/", "/ui/index.html", "/ui/status-page.css", "/ui/status-page.js", "/ui/render.js", "/ui/charts.js", "/ui/cluster-view.js"];

/**
 * The route a target names: `/v1/health`, `/metrics`, `/v1/namespaces/{ns}/{op}`, the inspection
 * routes `/v1/namespaces`, `/v1/namespaces/{ns}/locks` and `/v1/namespaces/{ns}/revoke`, the
 * activity feed `/v1/events` (with the inspection routes), the status page's files (query
 * ignored), or none.
 */
export function routeOf(target: string): RouteOf {
  const path = target.split("?", 1)[0] ?? "";
  if (path === "/v1/health") return "health";
  if (path === "/metrics") return "metrics";
  if (path === "/v1/namespaces" || path === "/v1/events") return "inspection";
  if (STATUS_PAGE.includes(path)) return "status-page";
  const prefix = "/v1/namespaces/";
  if (!path.startsWith(prefix)) return "unmatched";
  const rest = path.slice(prefix.length);
  const slash = rest.indexOf("/");
  if (slash < 0) return "unmatched";
  const operation = rest.slice(slash + 1);
  if (operation === "locks" || operation === "revoke") return "inspection";
  return (OPS as readonly string[]).includes(operation) ? "operation" : "unmatched";
}

/** True when a raw (percent-encoded) namespace segment decodes to a valid namespace. */
export function isValidRawNamespace(raw: string): boolean {
  try {
    return NAMESPACE.test(decodeURIComponent(raw));
  } catch {
    return false;
  }
}
