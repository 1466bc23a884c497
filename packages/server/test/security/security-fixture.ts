import type { LockRequest } from "@leasehold/protocol";
import { errorOf, rawRequest, type RawResponse } from "../support/raw-request.js";

/** Headers of a JSON request, with a bearer token when one is given. */
export function jsonHeaders(token?: string): Record<string, string> {
  return token === undefined ? { "content-type": "application/json" } : { "content-type": "application/json", authorization: `Bearer ${token}` };
}

/** POST a JSON body to an operation of a namespace on a fresh connection. */
export function post(url: string, namespace: string, operation: string, body: unknown, token?: string): Promise<RawResponse> {
  const text = typeof body === "string" ? body : JSON.stringify(body);
  return rawRequest(url, `/v1/namespaces/${namespace}/${operation}`, { body: text, headers: jsonHeaders(token) });
}

/** A lock request on one exclusive descriptor. */
export function lockBody(descriptor: string, acquireTimeoutMs = 0, extra: Partial<LockRequest> = {}): LockRequest {
  return { locks: [{ descriptor, mode: "exclusive" }], acquireTimeoutMs, ...extra };
}

/** The token of an `acquired` lock answer (throws otherwise). */
export function tokenOf(res: RawResponse): string {
  const token = (res.json as { status?: string; token?: string } | undefined)?.token;
  if (res.status !== 200 || typeof token !== "string") throw new Error(`not a grant (status ${res.status}): ${res.text.slice(0, 200)}`);
  return token;
}

export { errorOf };
