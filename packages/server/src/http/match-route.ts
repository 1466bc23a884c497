import { isBatchOperation, isOperation, isWaitAndLeaseOperation, isWatchOperation, type AnyOperation } from "@leasehold/protocol";
import { STATUS_PAGE_FILES } from "./serve-status-page.js";

/** What a request path names, before the method, namespace or body are looked at. */
export type Route =
  | { readonly kind: "operation"; readonly operation: AnyOperation; readonly rawNamespace: string }
  | { readonly kind: "health" }
  | { readonly kind: "cluster" }
  | { readonly kind: "cluster-members" }
  | { readonly kind: "metrics" }
  | { readonly kind: "namespaces" }
  | { readonly kind: "locks"; readonly rawNamespace: string }
  | { readonly kind: "revoke"; readonly rawNamespace: string }
  | { readonly kind: "events" }
  | { readonly kind: "ui"; readonly file: string }
  | { readonly kind: "unmatched" };

/** The methods each known route answers, in the form of an `allow` header. */
export const ALLOWED_METHODS = {
  operation: ["POST"],
  // HEAD rides along with GET so load balancers can probe without a body.
  health: ["GET", "HEAD"],
  cluster: ["GET", "HEAD"],
  // The status page's view of the whole cluster (docs/operations.md "Status page").
  "cluster-members": ["GET"],
  metrics: ["GET", "HEAD"],
  // Inspection and revoke (docs/protocol.md "Inspection and revoke").
  namespaces: ["GET"],
  locks: ["GET"],
  revoke: ["POST"],
  // The status page and its activity feed (docs/operations.md "Status page").
  events: ["GET"],
  ui: ["GET", "HEAD"],
} as const satisfies Record<Exclude<Route["kind"], "unmatched">, readonly string[]>;

const NAMESPACES_PREFIX = "/v1/namespaces/";

/**
 * Match a request target to a route by its path alone; the query string is ignored. The namespace
 * is returned still percent-encoded: decoding and validating it is a later, separately answered
 * step (a bad namespace is a 400 on a known route, not a 404).
 */
export function matchRoute(target: string | undefined): Route {
  const path = (target ?? "/").split("?", 1)[0] ?? "/";
  if (path === "/v1/health") return { kind: "health" };
  if (path === "/v1/cluster") return { kind: "cluster" };
  if (path === "/v1/cluster/members") return { kind: "cluster-members" };
  if (path === "/metrics") return { kind: "metrics" };
  if (path === "/v1/namespaces") return { kind: "namespaces" };
  if (path === "/v1/events") return { kind: "events" };
  if (path === "/ui" || path === "/ui/") return { kind: "ui", file: "" };
  if (path.startsWith("/ui/") && Object.hasOwn(STATUS_PAGE_FILES, path.slice(4))) return { kind: "ui", file: path.slice(4) };
  if (!path.startsWith(NAMESPACES_PREFIX)) return { kind: "unmatched" };
  const rest = path.slice(NAMESPACES_PREFIX.length);
  const slash = rest.indexOf("/");
  if (slash < 0) return { kind: "unmatched" };
  const operation = rest.slice(slash + 1);
  if (operation === "locks") return { kind: "locks", rawNamespace: rest.slice(0, slash) };
  if (operation === "revoke") return { kind: "revoke", rawNamespace: rest.slice(0, slash) };
  if (!isOperation(operation) && !isBatchOperation(operation) && !isWaitAndLeaseOperation(operation) && !isWatchOperation(operation)) return { kind: "unmatched" };
  return { kind: "operation", operation, rawNamespace: rest.slice(0, slash) };
}
