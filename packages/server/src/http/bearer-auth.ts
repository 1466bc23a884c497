import { createHash, timingSafeEqual } from "node:crypto";
import { ADMIN_SCOPE, ANY_NAMESPACE, type AuthTable } from "./auth-table.js";

/** What one presented credential may do. */
export interface CredentialScopes {
  /** Listed under `"@admin"`: every namespace, metrics, and the admin routes. */
  readonly admin: boolean;
  /** Listed under `"*"` or `"@admin"`: every namespace. */
  readonly everywhere: boolean;
  /** The namespaces it is listed under by name. */
  readonly namespaces: ReadonlySet<string>;
}

/** Checks the `authorization` header of a request against an {@link AuthTable}. */
export interface BearerAuth {
  /**
   * True when `authorization` is `Bearer <token>` with a token valid for `namespace`; `null` asks
   * for a token valid for every namespace (`"*"`), as `GET /metrics` does.
   */
  allows(authorization: string | undefined, namespace: string | null): boolean;
  /**
   * Everything the credential in `authorization` may do, or `null` when it is no valid credential
   * at all. Compares against every entry of the table, without an early exit, like `allows`.
   */
  scopes(authorization: string | undefined): CredentialScopes | null;
}

function presentedToken(authorization: string | undefined): string | undefined {
  if (authorization === undefined) return undefined;
  return /^Bearer +(\S+) *$/i.exec(authorization)?.[1];
}

const digest = (token: string): Buffer => createHash("sha256").update(token, "utf8").digest();

/**
 * Build the checker of a table. Tokens are kept only as SHA-256 digests and compared with
 * `timingSafeEqual` over those fixed 32 bytes, against every candidate with no early exit, so the
 * time taken says nothing about how much of a guess was right, its length, or which entry matched.
 */
export function createBearerAuth(table: AuthTable): BearerAuth {
  const digests = new Map<string, readonly Buffer[]>();
  for (const [namespace, tokens] of Object.entries(table)) digests.set(namespace, tokens.map(digest));
  const admins = digests.get(ADMIN_SCOPE) ?? [];
  const everywhere = [...(digests.get(ANY_NAMESPACE) ?? []), ...admins];

  return {
    allows(authorization, namespace) {
      const presented = presentedToken(authorization);
      if (presented === undefined) return false;
      const candidate = digest(presented);
      const scoped = namespace === null ? [] : (digests.get(namespace) ?? []);
      let ok = false;
      for (const known of everywhere) ok = timingSafeEqual(candidate, known) || ok;
      for (const known of scoped) ok = timingSafeEqual(candidate, known) || ok;
      return ok;
    },
    scopes(authorization) {
      const presented = presentedToken(authorization);
      if (presented === undefined) return null;
      const candidate = digest(presented);
      const namespaces = new Set<string>();
      let admin = false;
      let anyNamespace = false;
      for (const [scope, known] of digests) {
        let hit = false;
        for (const d of known) hit = timingSafeEqual(candidate, d) || hit;
        if (!hit) continue;
        if (scope === ADMIN_SCOPE) admin = true;
        else if (scope === ANY_NAMESPACE) anyNamespace = true;
        else namespaces.add(scope);
      }
      if (!admin && !anyNamespace && namespaces.size === 0) return null;
      return { admin, everywhere: admin || anyNamespace, namespaces };
    },
  };
}
