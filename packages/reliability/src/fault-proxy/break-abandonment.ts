import type { EmbeddedLockService } from "@leasehold/server";

/**
 * Break a running server on purpose, for the section's negative control: its lock engine no longer
 * takes abandoned waits out of the queues. The service still drops the callers whose connection
 * closed, so such a wait, once the lock frees up, is granted to nobody: the ghost holder that the
 * `grant-to-nobody` check exists to catch. It reaches into the service's private `engine`, so it
 * throws if that ever stops being there, rather than letting the control pass vacuously.
 */
export function breakAbandonment(service: EmbeddedLockService): void {
  const engine = (service as unknown as { engine?: { abandon?: unknown } }).engine;
  if (engine === undefined || typeof engine.abandon !== "function") {
    throw new Error("breakAbandonment: the lock service has no engine.abandon any more; update the negative control");
  }
  engine.abandon = () => false;
}
