import { ERROR_STATUS, type ErrorCode } from "../errors.js";
import { LIMITS, NAMESPACE_PATTERN } from "../limits.js";

// Pieces of the OpenAPI document shared by its files: references, error answers, the namespace parameter.

/** A JSON object of the document. */
export type Json = Record<string, unknown>;

/** A reference to a component schema. */
export const ref = (component: string): Json => ({ $ref: `#/components/schemas/${component}` });
/** An `application/json` content whose schema is a component. */
export const json = (component: string): Json => ({ "application/json": { schema: ref(component) } });

/** Which error codes each kind of route can answer, beyond those every route can. */
export const EVERY_ROUTE: readonly ErrorCode[] = ["UNAUTHENTICATED", "METHOD_NOT_ALLOWED", "TOO_MANY_REQUESTS", "UNAVAILABLE", "INTERNAL"];
export const EVERY_OPERATION: readonly ErrorCode[] = [...EVERY_ROUTE, "INVALID_ARGUMENT", "PAYLOAD_TOO_LARGE", "UNSUPPORTED_MEDIA_TYPE", "NOT_LEADER"];

const WHEN: Record<ErrorCode, string> = {
  INVALID_ARGUMENT: "A query parameter is unknown, repeated or malformed (details.path = query.<name>), or the body is not JSON, or breaks a rule of the protocol (unknown field, value out of range, null, duplicate descriptors, bad namespace, …); details.path names the first offending field and details.problems lists up to ten.",
  UNAUTHENTICATED: "Authentication is configured and the request lacks a valid bearer token for the namespace (www-authenticate: Bearer).",
  PERMISSION_DENIED: "The credential is valid but lacks the scope the route needs (revoke needs the admin scope), or the server refuses admin routes because no authentication is configured.",
  NOT_FOUND: "No such route (a server without lock batches answers this on lock-batch and lock-cancel, one without waits or timestamp leases on wait-for-locks and timestamp-leases, one without an activity feed on /v1/events), or no such file of the status page.",
  METHOD_NOT_ALLOWED: "Wrong method on a known route; the allow header names the right one.",
  REQUEST_ID_CONFLICT: "The requestId names a live request with different locks, behavior or max.",
  PAYLOAD_TOO_LARGE: `The body is over ${LIMITS.maxBodyBytes} bytes.`,
  UNSUPPORTED_MEDIA_TYPE: "A content type other than application/json.",
  TOO_MANY_REQUESTS: "A configured limit is exceeded: the client address's request rate (retry-after header) or the namespace's waiting lock requests (nothing was queued).",
  NOT_LEADER: "Cluster mode: this server does not lead the namespace's shard; details.leaderUrl names the leader when known. Nothing changed.",
  INTERNAL: "A bug; never caused by what a client sent.",
  UNAVAILABLE: "The server is shutting down, over its connection limit, or (cluster mode) the shard has no leader yet (retry-after header, details.retryAfterMs).",
  CANCELLED: "The waiting lock request was given up by lock-cancel (status 499).",
  BAD_RESPONSE: "Raised by clients only; never sent by a server.",
};

const RETRY_AFTER = { "retry-after": { description: "Seconds to wait before retrying (at least 1).", schema: { type: "integer", minimum: 1 } } };

/** The error answers of a route, one per status, each naming its codes. */
export function errors(codes: readonly ErrorCode[]): Json {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of codes) byStatus.set(ERROR_STATUS[code], [...(byStatus.get(ERROR_STATUS[code]) ?? []), code]);
  const responses: Json = {};
  for (const [status, list] of [...byStatus].sort(([a], [b]) => a - b)) {
    const answer: Json = { description: list.map((code) => `${code}: ${WHEN[code]}`).join(" "), content: json("ErrorBody") };
    if (status === 429 || status === 503) answer.headers = RETRY_AFTER;
    if (status === 401) answer.headers = { "www-authenticate": { schema: { type: "string", const: "Bearer" } } };
    if (status === 405) answer.headers = { allow: { schema: { type: "string" } } };
    responses[String(status)] = answer;
  }
  return responses;
}

/** The `{namespace}` path parameter. */
export const NAMESPACE_PARAMETER = {
  name: "namespace",
  in: "path",
  required: true,
  description: "Created on first use; shares nothing with any other namespace.",
  schema: { type: "string", pattern: NAMESPACE_PATTERN.source },
};
