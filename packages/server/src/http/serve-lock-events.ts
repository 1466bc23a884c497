import type { LockWatchUpdate } from "@leasehold/protocol";
import type { EmbeddedLockService } from "../service/embedded-lock-service.js";

/** What {@link serveLockEvents} needs of the request's connection. */
export interface LockEventsExchange {
  /** Called once if the client leaves while the answer is pending. */
  onGone: (() => void) | null;
}

/**
 * `lock-events` over HTTP. Only a body asking to wait pays for an AbortController: a long poll
 * whose client leaves stops waiting at once instead of holding its timer for up to 30 s.
 */
export async function serveLockEvents(service: EmbeddedLockService, namespace: string, body: unknown, exchange: LockEventsExchange): Promise<LockWatchUpdate> {
  const waits = typeof body === "object" && body !== null && typeof (body as { waitMs?: unknown }).waitMs === "number" && (body as { waitMs: number }).waitMs > 0;
  if (!waits) return service.lockEvents(namespace, body);
  const controller = new AbortController();
  exchange.onGone = () => controller.abort();
  try {
    return await service.lockEvents(namespace, body, { signal: controller.signal });
  } finally {
    exchange.onGone = null;
  }
}
