/**
 * A `retry-after` header in ms: whole seconds (what PROTOCOL.md servers send) or an HTTP date
 * (what a proxy in front of them may send instead); undefined when absent, unreadable or in the
 * past. Both retry paths read it through this one function: undici's `RetryAgent` callback
 * (jittered-retry.ts) and the cluster transport.
 */
export function retryAfterMs(header: string | string[] | undefined): number | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined || value === "") return undefined;
  const seconds = Number(value);
  if (!Number.isNaN(seconds)) return Number.isFinite(seconds) && seconds >= 0 ? seconds * 1_000 : undefined;
  const at = Date.parse(value);
  return Number.isNaN(at) || at < Date.now() ? undefined : at - Date.now();
}
