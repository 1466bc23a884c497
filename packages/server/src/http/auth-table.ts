import { validateNamespace } from "@leasehold/protocol";

/**
 * Which bearer tokens may call which namespaces: namespace name → tokens. The key `"*"` grants
 * every namespace and `GET /metrics`; the key `"@admin"` grants all of that plus the admin routes
 * (revoke). Example: `{ "@admin": ["ops-token"], "billing": ["billing-token"] }`. An empty table
 * (no keys) means authentication is off.
 */
export type AuthTable = Readonly<Record<string, readonly string[]>>;

/** The key of tokens valid for every namespace (and for `GET /metrics`). */
export const ANY_NAMESPACE = "*";

/**
 * The key of admin tokens: valid for every namespace, `GET /metrics` and the admin routes (revoke).
 * Not a valid namespace name (namespaces start with a letter or digit), so it can never collide
 * with one.
 */
export const ADMIN_SCOPE = "@admin";

/**
 * Shortest token accepted. A bearer token is a password a program sends on every call: 16
 * characters keep it out of guessing range even at the server's full request rate.
 */
export const MIN_TOKEN_LENGTH = 16;

/**
 * Parse and check the JSON text of an auth table. `source` names where the text came from (a file
 * path, an environment variable) for the error message; the message never quotes a token. Throws
 * an `Error` on any mistake, since a half-read table would silently lock clients out or let them in.
 */
export function parseAuthTable(text: string, source: string): AuthTable {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new Error(`${source}: not valid JSON (${err instanceof Error ? err.message : String(err)})`);
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw new Error(`${source}: expected a JSON object mapping namespaces (or "*") to arrays of tokens`);
  }
  const table: Record<string, readonly string[]> = {};
  for (const [namespace, tokens] of Object.entries(parsed)) {
    if (namespace !== ANY_NAMESPACE && namespace !== ADMIN_SCOPE) {
      try {
        validateNamespace(namespace);
      } catch {
        throw new Error(`${source}: ${JSON.stringify(namespace)} is not a valid namespace name nor "*" nor "${ADMIN_SCOPE}"`);
      }
    }
    if (!Array.isArray(tokens) || tokens.length === 0) {
      throw new Error(`${source}: the tokens of ${JSON.stringify(namespace)} must be a non-empty array of strings`);
    }
    tokens.forEach((token: unknown, i) => {
      // Tokens travel in an HTTP header: visible ASCII only, no spaces.
      if (typeof token !== "string" || token.length < MIN_TOKEN_LENGTH || !/^[\x21-\x7e]+$/.test(token)) {
        throw new Error(
          `${source}: token ${i} of ${JSON.stringify(namespace)} must be a string of at least ${MIN_TOKEN_LENGTH} visible ASCII characters without spaces`,
        );
      }
    });
    table[namespace] = Object.freeze([...(tokens as string[])]);
  }
  return Object.freeze(table);
}
