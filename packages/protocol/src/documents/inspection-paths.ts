import type { ErrorCode } from "../errors.js";
import { DEFAULT_LOCKS_PAGE_SIZE, DEFAULT_NAMESPACES_PAGE_SIZE } from "../inspection-query.js";
import { INSPECTION_VIEWS } from "../inspection-schemas.js";
import { LIMITS, NAMESPACE_PATTERN } from "../limits.js";
import { errors, EVERY_ROUTE, json, NAMESPACE_PARAMETER, type Json } from "./openapi-parts.js";

/**
 * The OpenAPI paths of the additions to v1 that are not lock-service operations (docs/protocol.md
 * "Inspection and revoke", "Activity feed and status page"): inspection, revoke, the polled
 * activity feed and the status page. Kept apart from openapi-document.ts so each file stays one idea.
 */
const QUERY_RULE = "An unknown, repeated or malformed query parameter is answered 400 INVALID_ARGUMENT with details.path = query.<name>, and nothing else happens.";
const READ_CODES: readonly ErrorCode[] = [...EVERY_ROUTE, "INVALID_ARGUMENT"];

const query = (name: string, description: string, schema: Json): Json => ({ name, in: "query", required: false, description, schema });
const pageLimit = (fallback: number): Json =>
  query("limit", `Entries per page (default ${fallback}).`, { type: "integer", minimum: 1, maximum: LIMITS.maxInspectionPageSize, default: fallback });

const NAMESPACES = {
  get: {
    operationId: "listNamespaces",
    summary: "Every namespace used since the server started, with its counts, in ascending order of name.",
    description: `Needs any valid token when authentication is configured and lists only the namespaces that token may use (all of them for a "*" or "@admin" token). ${QUERY_RULE}`,
    parameters: [
      query("cursor", "A namespace name: list those after it (the nextCursor of the previous page). Default: from the start.", { type: "string", pattern: NAMESPACE_PATTERN.source }),
      pageLimit(DEFAULT_NAMESPACES_PAGE_SIZE),
    ],
    responses: { "200": { description: "OK", content: json("NamespacesResponse") }, ...errors(READ_CODES) },
  },
};

const LOCKS = {
  get: {
    operationId: "inspectLocks",
    summary: "One page of a namespace's lock table: its descriptors with their holders and queues, its waiting as-many-as-possible requests, or its immutable-timestamp locks.",
    description:
      "Needs a token valid for the namespace, as its operations do. A page costs memory in proportion to limit, never to the namespace; " +
      "nextCursor is present when more entries may follow, and only its absence means the end. A namespace never used answers an empty page. " +
      QUERY_RULE,
    parameters: [
      NAMESPACE_PARAMETER,
      query("view", "descriptors: per descriptor, its holders and its queue; watchers: waiting as-many-as-possible requests; immutable: immutable-timestamp locks.", {
        type: "string",
        enum: [...INSPECTION_VIEWS],
        default: INSPECTION_VIEWS[0],
      }),
      query("prefix", "Only descriptors starting with this string (1..1024 UTF-8 bytes); with view=watchers, only watchers of at least one such descriptor. Not allowed with view=immutable.", {
        type: "string",
        minLength: 1,
      }),
      query("contended", "true: only descriptors somebody waits for (a queue or a watcher). descriptors view only.", { type: "string", enum: ["true", "false"], default: "false" }),
      query("cursor", "Resume after this entry: a descriptor (descriptors view), a start timestamp (immutable) or the nextCursor of a watchers page (decimal digits).", {
        type: "string",
        minLength: 1,
      }),
      pageLimit(DEFAULT_LOCKS_PAGE_SIZE),
    ],
    responses: { "200": { description: "OK: a DescriptorsPage, WatchersPage or ImmutableLocksPage, by view.", content: json("NamespaceLocksResponse") }, ...errors(READ_CODES) },
  },
};

const REVOKE = {
  post: {
    operationId: "revoke",
    summary: "Release the holders with these fingerprints, or every holder of these descriptors, whatever else they hold; waiters are granted at once.",
    description:
      'Needs an admin token (listed under "@admin"): a valid token without it is answered 403 PERMISSION_DENIED. Without authentication configured it is refused ' +
      "with 403 PERMISSION_DENIED unless the server was started with --allow-admin-without-auth. A revoked holder learns of it at its next refresh.",
    parameters: [NAMESPACE_PARAMETER],
    requestBody: { required: true, content: json("RevokeRequest") },
    responses: {
      "200": { description: "OK", content: json("RevokeResponse") },
      ...errors([...EVERY_ROUTE, "INVALID_ARGUMENT", "PAYLOAD_TOO_LARGE", "UNSUPPORTED_MEDIA_TYPE", "PERMISSION_DENIED"]),
    },
  },
};

const EVENTS = {
  get: {
    operationId: "events",
    summary: "The activity feed: lapses and revocations after the given seq, polled (a ring buffer of the last 1,000 events, not a stream).",
    description:
      "Polled rather than streamed so it works through any proxy and carries the authorization header like every other route. Needs any valid token " +
      "when authentication is configured; lists only events of the namespaces the token may use, and seconds only for a token valid everywhere. " +
      "A poller that falls behind sees a gap in seq; nextSeq smaller than the after sent means the server restarted: start over. " +
      QUERY_RULE,
    parameters: [query("after", "The nextSeq of an earlier answer (decimal digits). Default 0: every event kept.", { type: "string", pattern: "^\\d{1,16}$", default: "0" })],
    responses: { "200": { description: "OK", content: json("EventsResponse") }, ...errors([...READ_CODES, "NOT_FOUND"]) },
  },
};

const CLUSTER_MEMBERS = {
  get: {
    operationId: "clusterMembers",
    summary: "The whole cluster as this server sees it: every shard's leader (server id, URL, epoch, standby) and every member with whether it answers.",
    description:
      "Members come from the cluster's member table (a server stopped cleanly leaves it at once; one that stopped heartbeating is listed for 15 minutes). " +
      "Whether a member answers is this server's own probe of its GET /v1/health (1 s timeout), made only while someone asks and at most every 1.5 s " +
      "whatever the number of callers. A single server lists itself as the only member, leading its one shard. Needs any valid token when " +
      "authentication is configured, like the activity feed. It takes no query parameters: " +
      QUERY_RULE,
    responses: { "200": { description: "OK", content: json("ClusterMembersResponse") }, ...errors(READ_CODES) },
  },
};

/** What the status page's files answer: static, no data, no credential. */
const UI_HEADERS = {
  "content-security-policy": { description: "Only the server's own scripts, styles and API.", schema: { type: "string" } },
  "cache-control": { schema: { type: "string", const: "no-cache" } },
};
const uiFile = (operationId: string, summary: string, content: Json, codes: readonly ErrorCode[], parameters: Json[]): Json => {
  const operation = (id: string): Json => ({
    operationId: id,
    summary,
    security: [],
    ...(parameters.length === 0 ? {} : { parameters }),
    responses: { "200": { description: "OK", headers: UI_HEADERS, content }, ...errors(codes) },
  });
  return { get: operation(operationId), head: operation(`${operationId}Head`) };
};
const UI_CODES: readonly ErrorCode[] = ["METHOD_NOT_ALLOWED", "TOO_MANY_REQUESTS", "UNAVAILABLE", "INTERNAL"];

/** The paths of inspection, revoke, the activity feed, the cluster's members and the status page, by path. */
export const INSPECTION_PATHS: Readonly<Record<string, Json>> = {
  "/v1/namespaces": NAMESPACES,
  "/v1/namespaces/{namespace}/locks": LOCKS,
  "/v1/namespaces/{namespace}/revoke": REVOKE,
  "/v1/events": EVENTS,
  "/v1/cluster/members": CLUSTER_MEMBERS,
  "/ui": uiFile("statusPage", "The status page (HTML); it polls the inspection routes and /v1/events with the token it is given.", { "text/html": { schema: { type: "string" } } }, UI_CODES, []),
  "/ui/{file}": uiFile(
    "statusPageFile",
    "A script or style of the status page; an unknown file is 404 NOT_FOUND.",
    { "text/javascript": { schema: { type: "string" } }, "text/css": { schema: { type: "string" } }, "text/html": { schema: { type: "string" } } },
    [...UI_CODES, "NOT_FOUND"],
    [{ name: "file", in: "path", required: true, schema: { type: "string" } }],
  ),
};
