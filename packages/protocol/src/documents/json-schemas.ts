import type { TSchema } from "@sinclair/typebox";
import * as A from "../activity-schemas.js";
import * as I from "../inspection-schemas.js";
import * as S from "../schemas.js";
import * as W from "../wait-and-lease-schemas.js";
import * as LW from "../lock-watch-schemas.js";
import * as CM from "../cluster-members-schemas.js";

/** JSON Schema dialect of every generated schema (OpenAPI 3.1 speaks the same one). */
export const JSON_SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema";

/** One body of the protocol with the name its schema file has (`schemas/<name>.schema.json`). */
export interface ProtocolBody {
  /** `<operation>.request` or `<operation>.response`, as the golden fixtures are named. */
  readonly name: string;
  /** The component name in `openapi.json` (`#/components/schemas/<component>`). */
  readonly component: string;
  /** The TypeBox schema it is generated from: the one validation.ts checks with. */
  readonly schema: TSchema;
  /** What it is, for people and generated clients. */
  readonly description: string;
}

const LINE_OF_LOCK_BATCH = Object.freeze({
  anyOf: [S.LockBatchResultLineSchema, S.LockBatchErrorLineSchema, S.LockBatchLeaseLineSchema, S.LockBatchGrantLineSchema],
});

/**
 * Every request and answer body of protocol v1, one entry each. The JSON Schema files and the
 * OpenAPI document are generated from this list (`pnpm --filter @leasehold/protocol generate`),
 * and a test fails when a `*RequestSchema`/`*ResponseSchema` of schemas.ts, inspection-schemas.ts or
 * activity-schemas.ts is missing from it.
 */
export const PROTOCOL_BODIES: readonly ProtocolBody[] = [
  { name: "lock.request", component: "LockRequest", schema: S.LockRequestSchema, description: "Body of POST /v1/namespaces/{namespace}/lock." },
  { name: "lock.response", component: "LockResponse", schema: S.LockResponseSchema, description: "200 answer of lock: acquired (with the token, lease and fencing tokens) or timeout (nothing held)." },
  { name: "unlock.request", component: "UnlockRequest", schema: S.UnlockRequestSchema, description: "Body of unlock: the tokens to release." },
  { name: "unlock.response", component: "UnlockResponse", schema: S.UnlockResponseSchema, description: "200 answer of unlock: the tokens that were held and are now released." },
  { name: "refresh.request", component: "RefreshRequest", schema: S.RefreshRequestSchema, description: "Body of refresh: the tokens whose leases to renew." },
  { name: "refresh.response", component: "RefreshResponse", schema: S.RefreshResponseSchema, description: "200 answer of refresh: the tokens still held, all with the new lease." },
  { name: "timestamps.request", component: "TimestampsRequest", schema: S.TimestampsRequestSchema, description: "Body of timestamps: how many fresh timestamps." },
  { name: "timestamps.response", component: "TimestampsResponse", schema: S.TimestampsResponseSchema, description: "200 answer of timestamps: the range [start, start + count)." },
  { name: "transactions-start.request", component: "StartTransactionsRequest", schema: S.StartTransactionsRequestSchema, description: "Body of transactions/start: how many transactions to start." },
  { name: "transactions-start.response", component: "StartTransactionsResponse", schema: S.StartTransactionsResponseSchema, description: "200 answer of transactions/start: start timestamps with the tokens of their immutable-timestamp locks." },
  { name: "immutable-timestamp.request", component: "ImmutableTimestampRequest", schema: S.ImmutableTimestampRequestSchema, description: "Body of immutable-timestamp: always {} (an empty body is accepted too)." },
  { name: "immutable-timestamp.response", component: "ImmutableTimestampResponse", schema: S.ImmutableTimestampResponseSchema, description: "200 answer of immutable-timestamp." },
  { name: "lock-batch.request", component: "LockBatchRequest", schema: S.LockBatchRequestSchema, description: "Body of lock-batch: 1..1,000 lock request bodies. The server checks each entry on its own and answers a bad entry on its line, so only the envelope decides a whole-batch 400." },
  { name: "lock-batch.response", component: "LockBatchLine", schema: LINE_OF_LOCK_BATCH as unknown as TSchema, description: "One line of the application/x-ndjson answer of lock-batch: { index, result } or { index, error } for an entry, and with compact: true also { lease } lease lines and { index, token, fencingTokens } grant lines." },
  { name: "lock-cancel.request", component: "LockCancelRequest", schema: S.LockCancelRequestSchema, description: "Body of lock-cancel: the requestId of the lock request to give up." },
  { name: "lock-cancel.response", component: "LockCancelResponse", schema: S.LockCancelResponseSchema, description: "200 answer of lock-cancel: whether a waiting or held request with that id was found." },
  { name: "wait-for-locks.request", component: "WaitForLocksRequest", schema: W.WaitForLocksRequestSchema, description: "Body of wait-for-locks: the descriptors to wait for (modes exclusive or shared), with the rules of lock for locks, requestId and acquireTimeoutMs." },
  { name: "wait-for-locks.response", component: "WaitForLocksResponse", schema: W.WaitForLocksResponseSchema, description: "200 answer of wait-for-locks: free (each descriptor in turn could have been granted after the request arrived; nothing was acquired) or timeout." },
  { name: "timestamp-leases.request", component: "TimestampLeaseRequest", schema: W.TimestampLeaseRequestSchema, description: "Body of timestamp-leases: the lease name and how many more fresh timestamps to take (0..10,000)." },
  { name: "timestamp-leases.response", component: "TimestampLeaseResponse", schema: W.TimestampLeaseResponseSchema, description: "200 answer of timestamp-leases: the token holding leased under the name, its lease, the smallest timestamp held under the name, and count fresh timestamps above leased." },
  { name: "timestamp-leases-min.request", component: "TimestampLeaseMinRequest", schema: W.TimestampLeaseMinRequestSchema, description: "Body of timestamp-leases/min: the lease name." },
  { name: "timestamp-leases-min.response", component: "TimestampLeaseMinResponse", schema: W.TimestampLeaseMinResponseSchema, description: "200 answer of timestamp-leases/min: the smallest timestamp held under the name, or a fresh timestamp when none is held." },
  { name: "lock-watches.request", component: "LockWatchesRequest", schema: LW.LockWatchesRequestSchema, description: "Body of lock-watches: 1..100 descriptor prefixes (each 0..1,024 UTF-8 bytes; \"\" watches everything) to watch or keep watching in the namespace." },
  { name: "lock-watches.response", component: "LockWatchesResponse", schema: LW.LockWatchesResponseSchema, description: "200 answer of lock-watches: every prefix now watched in the namespace." },
  { name: "lock-events.request", component: "LockEventsRequest", schema: LW.LockEventsRequestSchema, description: "Body of lock-events: since (a { logId, version } position, or null for a snapshot) and an optional waitMs long poll (0..30,000)." },
  { name: "lock-events.response", component: "LockWatchUpdate", schema: LW.LockWatchUpdateSchema, description: "200 answer of lock-events (and lockWatch of transactions/start): the events after since, or a snapshot of every watched lock held now." },
  { name: "health.response", component: "HealthResponse", schema: S.HealthResponseSchema, description: "200 answer of GET /v1/health." },
  { name: "cluster.response", component: "ClusterResponse", schema: S.ClusterResponseSchema, description: "200 answer of GET /v1/cluster: one entry per shard, in shard order." },
  { name: "cluster-members.response", component: "ClusterMembersResponse", schema: CM.ClusterMembersResponseSchema, description: "200 answer of GET /v1/cluster/members: every shard's leader (server id, URL, epoch, standby), and every member of the cluster with whether it answered this server's latest probe of its GET /v1/health (probes at most every 1.5 s, only while someone asks)." },
  { name: "namespaces.response", component: "NamespacesResponse", schema: I.NamespacesResponseSchema, description: "200 answer of GET /v1/namespaces: per namespace used since the server started, its counts, in ascending order of name; nextCursor when more may follow." },
  { name: "locks.response", component: "NamespaceLocksResponse", schema: I.NamespaceLocksResponseSchema, description: "200 answer of GET /v1/namespaces/{namespace}/locks: one page of the asked view (descriptors, watchers or immutable), with the namespace's summary; nextCursor when more may follow. Holders are named by fingerprint, never by token." },
  { name: "revoke.request", component: "RevokeRequest", schema: I.RevokeRequestSchema, description: "Body of POST /v1/namespaces/{namespace}/revoke: exactly one of fingerprints or descriptors (the \"exactly one\" is checked by the server), and an optional reason for the log." },
  { name: "revoke.response", component: "RevokeResponse", schema: I.RevokeResponseSchema, description: "200 answer of revoke: each released holder once, and the asked fingerprints or descriptors that matched no holder." },
  { name: "events.response", component: "EventsResponse", schema: A.EventsResponseSchema, description: "200 answer of GET /v1/events (a polled ring buffer, not a stream): lapses and revocations after the asked seq in the namespaces the credential may use, the per-second grant and wait history (only for a credential valid everywhere), and whether the credential may revoke." },
  { name: "error.response", component: "ErrorBody", schema: S.ErrorBodySchema, description: "Body of every non-2xx answer." },
];

/**
 * The rules of docs/protocol.md that a JSON Schema can state and the TypeBox schemas leave to
 * validation.ts: `limit` goes with `permit` and only with it, `max` only with
 * `as-many-as-possible`. (Descriptors unique within a request, the 1024 UTF-8 bytes and
 * well-formed Unicode of a descriptor cannot be stated; their descriptions say so.)
 */
function addCrossFieldRules(node: Record<string, unknown>): void {
  const properties = node.properties as Record<string, Record<string, unknown>> | undefined;
  if (properties === undefined) return;
  if (properties.mode !== undefined && properties.limit !== undefined) {
    node.if = { properties: { mode: { const: "permit" } }, required: ["mode"] };
    node.then = { required: ["limit"] };
    node.else = { properties: { limit: false } };
  }
  if (properties.behavior !== undefined && properties.max !== undefined) {
    node.if = { properties: { behavior: { const: "as-many-as-possible" } }, required: ["behavior"] };
    node.else = { properties: { max: false } };
  }
  if (properties.descriptor !== undefined) {
    properties.descriptor.description =
      "1..1024 UTF-8 bytes of well-formed Unicode (no lone surrogates); the byte count and the surrogates are checked by the server, not by this schema";
  }
}

/** A plain JSON copy of a TypeBox schema (its symbol keys dropped), with the cross-field rules added. */
export function toJsonSchema(schema: TSchema): Record<string, unknown> {
  return JSON.parse(JSON.stringify(schema), (_key, value: unknown) => {
    if (typeof value === "object" && value !== null && !Array.isArray(value)) addCrossFieldRules(value as Record<string, unknown>);
    return value;
  }) as Record<string, unknown>;
}

/**
 * Every body's JSON Schema (2020-12), self-contained, by file name (`<name>.schema.json`): what
 * `schemas/` of the package holds. Pure: the generator script writes them.
 */
export function protocolJsonSchemas(): Record<string, Record<string, unknown>> {
  const files: Record<string, Record<string, unknown>> = {};
  for (const body of PROTOCOL_BODIES) {
    files[`${body.name}.schema.json`] = {
      $schema: JSON_SCHEMA_DIALECT,
      $id: `urn:leasehold:protocol:v1:${body.name}`,
      title: body.component,
      description: body.description,
      ...toJsonSchema(body.schema),
    };
  }
  return files;
}
