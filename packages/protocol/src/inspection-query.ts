import { LeaseholdError } from "./errors.js";
import { INSPECTION_VIEWS } from "./inspection-schemas.js";
import type { InspectionView, NamespaceLocksQuery, NamespacesQuery } from "./inspection-types.js";
import { LIMITS, NAMESPACE_PATTERN } from "./limits.js";
import { descriptorProblem, shown } from "./validation.js";

/** Default `limit` of a `GET …/locks` page: a screenful, cheap to build even in a huge namespace. */
export const DEFAULT_LOCKS_PAGE_SIZE = 100;
/** Default `limit` of a `GET /v1/namespaces` page. */
export const DEFAULT_NAMESPACES_PAGE_SIZE = 1_000;

/** Query parameters as decoded name/value pairs, in order (what `URLSearchParams` iterates). */
export type QueryEntries = Iterable<readonly [string, string]>;

function bad(name: string, message: string): never {
  throw new LeaseholdError("INVALID_ARGUMENT", `query parameter ${name} ${message}`, { path: `query.${name}` });
}

/** Collect the parameters once each, refusing unknown and repeated ones. */
function collect(entries: QueryEntries, known: readonly string[], route: string): Map<string, string> {
  const seen = new Map<string, string>();
  for (const [name, value] of entries) {
    if (!known.includes(name)) bad(shown(name).slice(1, -1), `is not a known parameter of ${route} (known: ${known.join(", ")})`);
    if (seen.has(name)) bad(name, "is given more than once");
    seen.set(name, value);
  }
  return seen;
}

function pageSize(value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < 1 || n > LIMITS.maxInspectionPageSize) {
    bad("limit", `must be an integer from 1 to ${LIMITS.maxInspectionPageSize} (got ${shown(value)})`);
  }
  return n;
}

/**
 * Parse the query of `GET /v1/namespaces/{namespace}/locks` (docs/protocol.md "Inspection and
 * revoke"). Throws `INVALID_ARGUMENT` with `details.path` = `query.<name>` for an unknown, repeated
 * or malformed parameter, or one the chosen view does not take.
 */
export function parseNamespaceLocksQuery(entries: QueryEntries): NamespaceLocksQuery {
  const q = collect(entries, ["view", "prefix", "contended", "cursor", "limit"], "GET /v1/namespaces/{namespace}/locks");
  const rawView = q.get("view") ?? "descriptors";
  const view = INSPECTION_VIEWS.find((v) => v === rawView);
  if (view === undefined) bad("view", `must be one of ${INSPECTION_VIEWS.join(", ")} (got ${shown(rawView)})`);
  const prefix = q.get("prefix");
  if (prefix !== undefined) {
    if (view === "immutable") bad("prefix", "is not allowed with view immutable (immutable-timestamp locks have no descriptor)");
    const problem = prefix === "" ? "must not be empty (leave it out to list every descriptor)" : descriptorProblem(prefix);
    if (problem !== undefined) bad("prefix", problem);
  }
  const rawContended = q.get("contended");
  if (rawContended !== undefined && rawContended !== "true" && rawContended !== "false") {
    bad("contended", `must be true or false (got ${shown(rawContended)})`);
  }
  const contended = rawContended === "true";
  if (rawContended !== undefined && view !== "descriptors") bad("contended", `is only allowed with view descriptors (view is ${view})`);
  const cursor = q.get("cursor");
  if (cursor !== undefined) checkCursor(view, cursor);
  return { view, prefix, contended, cursor, limit: pageSize(q.get("limit"), DEFAULT_LOCKS_PAGE_SIZE) };
}

function checkCursor(view: InspectionView, cursor: string): void {
  if (view === "descriptors") {
    const problem = cursor === "" ? "must not be empty (leave it out to start at the beginning)" : descriptorProblem(cursor);
    if (problem !== undefined) bad("cursor", problem);
    return;
  }
  if (!/^\d{1,16}$/.test(cursor) || !Number.isSafeInteger(Number(cursor))) {
    const what = view === "immutable" ? "a start timestamp" : "the nextCursor of a watchers page";
    bad("cursor", `must be ${what}: decimal digits (got ${shown(cursor)})`);
  }
}

/** Parse the query of `GET /v1/namespaces`; throws `INVALID_ARGUMENT` naming `query.<name>`. */
export function parseNamespacesQuery(entries: QueryEntries): NamespacesQuery {
  const q = collect(entries, ["cursor", "limit"], "GET /v1/namespaces");
  const cursor = q.get("cursor");
  if (cursor !== undefined && !NAMESPACE_PATTERN.test(cursor)) bad("cursor", `must be a namespace name (got ${shown(cursor)})`);
  return { cursor, limit: pageSize(q.get("limit"), DEFAULT_NAMESPACES_PAGE_SIZE) };
}

/** The path of `GET /v1/namespaces` with its query (only the parameters given). */
export function namespacesPath(query: Partial<NamespacesQuery> = {}): string {
  return withQuery("/v1/namespaces", [["cursor", query.cursor], ["limit", query.limit]]);
}

/** The path of `GET /v1/namespaces/{namespace}/locks` with its query (only the parameters given). */
export function namespaceLocksPath(namespace: string, query: Partial<NamespaceLocksQuery> = {}): string {
  return withQuery(`/v1/namespaces/${encodeURIComponent(namespace)}/locks`, [
    ["view", query.view],
    ["prefix", query.prefix],
    ["contended", query.contended === true ? "true" : undefined],
    ["cursor", query.cursor],
    ["limit", query.limit],
  ]);
}

/** The path of `POST /v1/namespaces/{namespace}/revoke`. */
export function revokePath(namespace: string): string {
  return `/v1/namespaces/${encodeURIComponent(namespace)}/revoke`;
}

function withQuery(path: string, params: readonly (readonly [string, string | number | undefined])[]): string {
  const parts: string[] = [];
  for (const [name, value] of params) if (value !== undefined) parts.push(`${name}=${encodeURIComponent(String(value))}`);
  return parts.length === 0 ? path : `${path}?${parts.join("&")}`;
}
