import type { Connection } from "./connection.js";

/** An answer other than 2xx, or no answer: `leasehold` prints it and exits 125. */
export class RequestFailed extends Error {
  override name = "RequestFailed";
}

/** Longest wait for an inspection or revoke answer, in ms: they are bounded pages, never waits. */
const TIMEOUT_MS = 10_000;

/**
 * Send one inspection or revoke request and return its parsed JSON body. A non-2xx answer
 * becomes a {@link RequestFailed} carrying the protocol error's code and message (the message
 * says what to fix, e.g. how to enable revoke); the bearer token is never part of any message.
 */
export async function adminRequest<T>(connection: Connection, method: "GET" | "POST", path: string, body?: unknown): Promise<T> {
  const url = new URL(path.replace(/^\//, ""), connection.url.endsWith("/") ? connection.url : `${connection.url}/`);
  let response: Response;
  try {
    response = await fetch(url, {
      method,
      headers: { ...connection.headers, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      body: body === undefined ? null : JSON.stringify(body),
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
  } catch (err) {
    const cause = err instanceof Error && err.cause instanceof Error ? `: ${err.cause.message}` : "";
    throw new RequestFailed(`${method} ${url.origin}${url.pathname} failed${cause || (err instanceof Error ? `: ${err.message}` : "")}`);
  }
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new RequestFailed(`${method} ${url.pathname}: HTTP ${response.status} with a body that is not JSON (is ${connection.url} a leasehold server?)`);
  }
  if (!response.ok) {
    const error = (parsed as { error: { code: unknown; message: unknown } | undefined }).error;
    if (response.status === 404 && error?.code === "NOT_FOUND") {
      throw new RequestFailed(`${method} ${url.pathname}: this server has no inspection API (it is older than this leasehold command)`);
    }
    throw new RequestFailed(`${String(error?.code ?? `HTTP ${response.status}`)}: ${String(error?.message ?? text.slice(0, 200))}`);
  }
  return parsed as T;
}
