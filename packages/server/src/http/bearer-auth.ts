import { createHash, timingSafeEqual } from "node:crypto";
import { ANY_NAMESPACE, type AuthTable } from "./auth-table.js";

/** Checks the `authorization` header of a request against an {@link AuthTable}. */
export interface BearerAuth {
  /**
   * True when `authorization` is `Bearer <token>` with a token valid for `namespace`; `null` asks
   * for a token valid for every namespace (`"*"`), as `GET /metrics` does.
   */
  allows(authorization: string | undefined, namespace: string | null): boolean;
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
  const everywhere = digests.get(ANY_NAMESPACE) ?? [];

  return {
    allows(authorization, namespace) {
      if (authorization === undefined) return false;
      const match = /^Bearer +(\S+) *$/i.exec(authorization);
      const presented = match?.[1];
      if (presented === undefined) return false;
      const candidate = digest(presented);
      const scoped = namespace === null ? [] : (digests.get(namespace) ?? []);
      let ok = false;
      for (const known of everywhere) ok = timingSafeEqual(candidate, known) || ok;
      for (const known of scoped) ok = timingSafeEqual(candidate, known) || ok;
      return ok;
    },
  };
}
