import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto";

/** Length of the cluster key in bytes (256 bits). */
export const CLUSTER_KEY_BYTES = 32;

/** The header a server-to-server request carries its signature in. */
export const CLUSTER_AUTH_HEADER = "x-leasehold-cluster-auth";

/**
 * How far a signed request's timestamp may be from the receiver's wall clock, either way. Default
 * 30,000 ms: members' clocks are NTP-synchronised to well within it, and a captured request can be
 * replayed only this long (a replay is harmless anyway: the receiver skips entries it applied and
 * refuses a snapshot older than its replica, see replica-store.ts).
 */
export const DEFAULT_MAX_SKEW_MS = 30_000;

/** A fresh random cluster key (created once, with the schema). */
export function newClusterKey(): Buffer {
  return randomBytes(CLUSTER_KEY_BYTES);
}

/** What a signature covers besides the key: the request as sent. */
export interface SignedRequest {
  readonly method: string;
  /** The request target, path and query, exactly as sent (`/v1/internal/replication/3`). */
  readonly path: string;
  /** The body's bytes (the signature covers their SHA-256). */
  readonly body: Uint8Array;
}

const sha256Hex = (body: Uint8Array): string => createHash("sha256").update(body).digest("hex");

function mac(key: Buffer, method: string, path: string, timestampMs: number, bodySha256: string): Buffer {
  return createHmac("sha256", key).update(`leasehold-cluster-v1\n${method.toUpperCase()}\n${path}\n${timestampMs}\n${bodySha256}`).digest();
}

/**
 * The value of {@link CLUSTER_AUTH_HEADER} for `request`: `v1 t=<ms> sha256=<hex> mac=<hex>`, where
 * `mac` is HMAC-SHA256 under the cluster key of the method, path, timestamp and the body's SHA-256.
 * The key itself never crosses the wire, a signature is good for one body and path only, and the
 * receiver checks it *before* reading the body (the body's digest is in the signed header).
 */
export function signRequest(key: Buffer, request: SignedRequest, nowMs: number = Date.now()): string {
  const digest = sha256Hex(request.body);
  return `v1 t=${nowMs} sha256=${digest} mac=${mac(key, request.method, request.path, nowMs, digest).toString("hex")}`;
}

/** Why a request's cluster authentication was refused (a fixed set: logged and counted). */
export type ClusterAuthRefusal = "missing" | "malformed" | "stale" | "signature" | "body";

/** A header that passed {@link verifyHeader}: the body must still match its digest ({@link verifyBody}). */
export interface VerifiedHeader {
  readonly bodySha256: string;
}

const HEADER = /^v1 t=(\d{1,16}) sha256=([0-9a-f]{64}) mac=([0-9a-f]{64})$/;

/**
 * Check the signed header of a request before its body is read: well-formed, its timestamp within
 * `maxSkewMs` of `nowMs`, and its MAC right (compared in constant time). Answers the digest the body
 * must have, or why it was refused.
 */
export function verifyHeader(
  key: Buffer,
  header: string | string[] | undefined,
  method: string,
  path: string,
  nowMs: number = Date.now(),
  maxSkewMs: number = DEFAULT_MAX_SKEW_MS,
): VerifiedHeader | ClusterAuthRefusal {
  if (header === undefined) return "missing";
  if (Array.isArray(header)) return "malformed";
  const match = HEADER.exec(header.trim());
  if (match === null) return "malformed";
  const [, t, digest, presented] = match as unknown as [string, string, string, string];
  const timestampMs = Number(t);
  const expected = mac(key, method, path, timestampMs, digest);
  // Compared before the time check, so a refusal takes the same time whatever was wrong.
  const macOk = timingSafeEqual(expected, Buffer.from(presented, "hex"));
  if (Math.abs(nowMs - timestampMs) > maxSkewMs) return "stale";
  if (!macOk) return "signature";
  return { bodySha256: digest };
}

/** True when `body` is what the verified header signed. */
export function verifyBody(verified: VerifiedHeader, body: Uint8Array): boolean {
  return timingSafeEqual(Buffer.from(sha256Hex(body), "hex"), Buffer.from(verified.bodySha256, "hex"));
}
