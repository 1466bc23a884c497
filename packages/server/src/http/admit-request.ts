import type { IncomingMessage } from "node:http";
import { LeaseholdError } from "@leasehold/protocol";
import type { ExtraHeaders } from "../support/send-json.js";
import type { BearerAuth } from "./bearer-auth.js";
import type { Route } from "./match-route.js";
import type { RateLimiter } from "./rate-limiter.js";

/** Why a request is answered before anything else is looked at, and the headers that go with it. */
export interface Refusal {
  readonly error: LeaseholdError;
  readonly headers: ExtraHeaders;
}

/** The gates of {@link createAdmission}; each one is off when absent. */
export interface AdmissionOptions {
  /** Bearer-token checks. Absent: every client is trusted, as before authentication existed. */
  readonly auth?: BearerAuth | undefined;
  /** Request rate per client address. Absent: no rate limit. */
  readonly rateLimiter?: RateLimiter | undefined;
  /**
   * True for a connection accepted beyond the connection limit; its first request is answered 503
   * and the connection closed. Absent: no connection limit.
   */
  readonly overConnectionLimit?: ((req: IncomingMessage) => boolean) | undefined;
  /** The connection limit, quoted in the 503's message. */
  readonly maxConnections?: number | undefined;
}

/** Decides, before routing details, the body or the namespace are looked at, whether a request is served. */
export type Admission = (req: IncomingMessage, route: Route) => Refusal | null;

const UNAUTHENTICATED: Refusal = Object.freeze({
  // One fixed answer for every refused request: it cannot differ by namespace, existing or not.
  error: new LeaseholdError("UNAUTHENTICATED", "this server requires a bearer token valid for the namespace: send authorization: Bearer <token>"),
  headers: Object.freeze({ "www-authenticate": 'Bearer realm="leasehold"' }),
});

/**
 * Stands for "any valid token": `GET /v1/namespaces` then lists only what that token may see. A
 * symbol, not a string: every string (the empty one included) may be a namespace from a path.
 */
const ANY_VALID_TOKEN = Symbol("any valid token");

/**
 * The namespace a token must be valid for; `null` means "every namespace", {@link ANY_VALID_TOKEN}
 * any valid token. Revoke is checked here like its namespace's operations (401); whether the
 * credential is an admin's is the route's own 403.
 */
function requiredScope(route: Route): string | null | typeof ANY_VALID_TOKEN | undefined {
  // The page's files carry no data; the calls it makes are checked like any other. The shard map
  // is open like health: it holds URLs and leader ids, never a token, and every client needs it
  // before it knows where its namespace lives.
  if (route.kind === "health" || route.kind === "unmatched" || route.kind === "ui" || route.kind === "cluster") return undefined;
  if (route.kind === "metrics") return null;
  // The activity feed, like the namespace list, shows each token what it may see. The cluster's
  // members, what the page shows beside them, need a valid token too: each look may make the
  // server probe every member, which nobody without a credential should be able to start.
  if (route.kind === "namespaces" || route.kind === "events" || route.kind === "cluster-members") return ANY_VALID_TOKEN;
  try {
    return decodeURIComponent(route.rawNamespace);
  } catch {
    // Undecodable: only a token valid everywhere passes, and then decodeNamespace answers 400.
    return null;
  }
}

/**
 * Build the admission gate, in this order: connection limit (503, the connection closes), request
 * rate (429 with `retry-after`), authentication (401 with `www-authenticate`). All of them run before
 * the method, namespace or body are checked, so a refused client learns nothing about a namespace.
 * `GET /v1/health` needs no token (load balancers probe it) and unmatched paths fall through to
 * their 404; `GET /metrics` needs a token valid for `"*"`.
 */
export function createAdmission(options: AdmissionOptions): Admission {
  const { auth, rateLimiter, overConnectionLimit } = options;
  return (req, route) => {
    if (overConnectionLimit?.(req) === true) {
      return {
        error: new LeaseholdError(
          "UNAVAILABLE",
          `the server has reached its connection limit (maxConnections ${options.maxConnections ?? "?"}); retry later or reuse a connection`,
          { limit: "maxConnections", value: options.maxConnections ?? null },
        ),
        headers: { connection: "close", "retry-after": "1" },
      };
    }
    if (rateLimiter !== undefined) {
      const wait = rateLimiter.take(req.socket.remoteAddress ?? "unknown");
      if (wait > 0) {
        return {
          error: new LeaseholdError("TOO_MANY_REQUESTS", `request rate over the limit (rateLimit ${rateLimiter.requestsPerSecond} requests/s per client address); retry after ${wait} s`, {
            limit: "rateLimit",
            value: rateLimiter.requestsPerSecond,
            retryAfterSeconds: wait,
          }),
          headers: { "retry-after": String(wait) },
        };
      }
    }
    if (auth !== undefined) {
      const scope = requiredScope(route);
      if (scope === ANY_VALID_TOKEN) {
        if (auth.scopes(req.headers.authorization) === null) return UNAUTHENTICATED;
      } else if (scope !== undefined && !auth.allows(req.headers.authorization, scope)) return UNAUTHENTICATED;
    }
    return null;
  };
}
