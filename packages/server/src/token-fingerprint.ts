import { hash } from "node:crypto";

/**
 * A short, one-way fingerprint of a token for diagnostics: the first 8 bytes of its SHA-256, as
 * 16 hex digits. A token is a bearer credential and never leaves the client in a message; the
 * fingerprint lets a subscriber tell tokens apart and match a grant with its release (and with
 * the server's `leasehold:server:lock:grant`, which computes the same) without being able to use
 * it. 64 bits keep accidental collisions out of any realistic trace, and reveal nothing usable.
 */
export function tokenFingerprint(token: string): string {
  // The one-shot `hash` (Node 20.12+) costs a fifth of a `createHash` object per call.
  return hash("sha256", token, "hex").slice(0, 16);
}
