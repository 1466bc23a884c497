import type { ErrorCode } from "../errors.js";
import { INSPECTION_PATHS } from "./inspection-paths.js";
import { errors, EVERY_OPERATION, EVERY_ROUTE, json, NAMESPACE_PARAMETER, ref, type Json } from "./openapi-parts.js";
import { JSON_SCHEMA_DIALECT, PROTOCOL_BODIES, toJsonSchema } from "./json-schemas.js";

interface Route {
  readonly operation: string;
  readonly summary: string;
  readonly request: string;
  readonly response: string;
  readonly codes?: readonly ErrorCode[];
  readonly optionalBody?: boolean;
}

const OPERATION_ROUTES: readonly Route[] = [
  { operation: "lock", summary: "Acquire locks, waiting up to acquireTimeoutMs. A timeout is a 200 answer, not an error.", request: "LockRequest", response: "LockResponse", codes: ["REQUEST_ID_CONFLICT", "CANCELLED"] },
  { operation: "unlock", summary: "Release tokens; unknown, expired and released tokens are ignored (idempotent).", request: "UnlockRequest", response: "UnlockResponse" },
  { operation: "refresh", summary: "Renew the leases of tokens still held; a lapsed token is never revived.", request: "RefreshRequest", response: "RefreshResponse" },
  { operation: "timestamps", summary: "Fresh timestamps, above every timestamp and fencing token the namespace ever handed out.", request: "TimestampsRequest", response: "TimestampsResponse" },
  { operation: "transactions/start", summary: "Start transactions, each holding an immutable-timestamp lock at its start timestamp.", request: "StartTransactionsRequest", response: "StartTransactionsResponse" },
  { operation: "immutable-timestamp", summary: "The smallest start timestamp held by an immutable-timestamp lock, or a fresh timestamp.", request: "ImmutableTimestampRequest", response: "ImmutableTimestampResponse", optionalBody: true },
  { operation: "lock-cancel", summary: "Give up the lock request with this requestId: a waiting one leaves every queue, a held one is released.", request: "LockCancelRequest", response: "LockCancelResponse" },
  { operation: "wait-for-locks", summary: "Wait, first in first out as a lock request in that mode would, until each descriptor in turn could have been granted; acquires nothing. A timeout is a 200 answer.", request: "WaitForLocksRequest", response: "WaitForLocksResponse", codes: ["REQUEST_ID_CONFLICT", "CANCELLED", "NOT_FOUND"] },
  { operation: "timestamp-leases", summary: "Hold a fresh timestamp under a name with a token (refreshed, unlocked and lapsing like a lock) and take count fresh timestamps above it.", request: "TimestampLeaseRequest", response: "TimestampLeaseResponse", codes: ["REQUEST_ID_CONFLICT", "NOT_FOUND"] },
  { operation: "timestamp-leases/min", summary: "The smallest timestamp held under a name, or a fresh timestamp when none is held.", request: "TimestampLeaseMinRequest", response: "TimestampLeaseMinResponse", codes: ["NOT_FOUND"] },
  { operation: "lock-watches", summary: "Watch descriptor prefixes in the namespace (or keep watching them); a watch lapses unless re-registered within the server's watch TTL.", request: "LockWatchesRequest", response: "LockWatchesResponse" },
  { operation: "lock-events", summary: "The lock and unlock events on watched descriptors after since, or a snapshot of the watched locks held now; waitMs long-polls.", request: "LockEventsRequest", response: "LockWatchUpdate" },
];


function operationPath(route: Route): Json {
  return {
    post: {
      operationId: route.operation.replace(/[/-](\w)/g, (_m, c: string) => c.toUpperCase()),
      summary: route.summary,
      parameters: [NAMESPACE_PARAMETER],
      requestBody: { required: route.optionalBody !== true, content: json(route.request) },
      responses: { "200": { description: "OK", content: json(route.response) }, ...errors([...EVERY_OPERATION, ...(route.codes ?? [])]) },
    },
  };
}

const LOCK_BATCH_PATH = {
  post: {
    operationId: "lockBatch",
    summary: "Run up to 1,000 lock requests in one call; each entry's answer is one NDJSON line, written as that entry resolves.",
    description:
      "The 200 answer is application/x-ndjson, chunked: one JSON object per line, in the order entries resolve (not index order). " +
      "Each line matches LockBatchLine. An entry's error never fails the other entries; the status it would have had is the status of its code. " +
      "Whole-batch errors (bad envelope, auth, size, …) are ordinary error answers, before any entry runs.",
    parameters: [NAMESPACE_PARAMETER],
    requestBody: { required: true, content: json("LockBatchRequest") },
    responses: {
      "200": {
        description: "One line per entry (and, with compact: true, lease lines), each a LockBatchLine followed by \\n.",
        headers: { "cache-control": { schema: { type: "string", const: "no-store" } } },
        content: { "application/x-ndjson": { schema: ref("LockBatchLine") } },
      },
      ...errors([...EVERY_OPERATION, "NOT_FOUND"]),
    },
  },
};

const get = (operationId: string, summary: string, content: Json, codes: readonly ErrorCode[], security?: unknown[]): Json => ({
  get: {
    operationId,
    summary,
    ...(security === undefined ? {} : { security }),
    responses: { "200": { description: "OK", content }, ...errors(codes) },
  },
});

/** Options of {@link openApiDocument}. */
export interface OpenApiDocumentOptions {
  /** `info.version`: the version of the package that ships the document. Default `"0.0.0"`. */
  readonly version?: string | undefined;
}

/**
 * The OpenAPI 3.1 document of the HTTP API: every route of docs/protocol.md with its request and
 * answer schemas (the same JSON Schemas as `schemas/`), status codes and error bodies. Pure; the
 * generator writes it to the package's `openapi.json`.
 */
export function openApiDocument(options: OpenApiDocumentOptions = {}): Json {
  const paths: Json = {};
  for (const route of OPERATION_ROUTES) paths[`/v1/namespaces/{namespace}/${route.operation}`] = operationPath(route);
  paths["/v1/namespaces/{namespace}/lock-batch"] = LOCK_BATCH_PATH;
  paths["/v1/health"] = get("health", "Liveness, leader id and version; needs no credentials.", json("HealthResponse"), ["UNAVAILABLE"], []);
  paths["/v1/cluster"] = get("cluster", "Which server leads each shard, as this server knows it (a single server: one shard, itself).", json("ClusterResponse"), EVERY_ROUTE);
  paths["/metrics"] = get(
    "metrics",
    "Prometheus text format; needs a token valid for every namespace (\"*\") when authentication is configured.",
    { "text/plain": { schema: { type: "string" } } },
    EVERY_ROUTE,
  );
  Object.assign(paths, INSPECTION_PATHS);
  const schemas: Json = {};
  for (const body of PROTOCOL_BODIES) schemas[body.component] = { description: body.description, ...toJsonSchema(body.schema) };
  return {
    openapi: "3.1.0",
    jsonSchemaDialect: JSON_SCHEMA_DIALECT,
    info: {
      title: "leasehold lock service",
      version: options.version ?? "0.0.0",
      description: "Protocol v1 of leasehold, a lock service in the style of AtlasDB TimeLock. docs/protocol.md is the full statement; this document is generated from the protocol package's TypeBox schemas.",
      license: { name: "Apache-2.0", identifier: "Apache-2.0" },
    },
    servers: [{ url: "http://127.0.0.1:7878", description: "the server of `pnpm start`" }],
    security: [{}, { bearer: [] }],
    paths,
    components: {
      schemas,
      securitySchemes: { bearer: { type: "http", scheme: "bearer", description: "Only when the server is configured with tokens (docs/operations.md, Authentication)." } },
    },
  };
}
