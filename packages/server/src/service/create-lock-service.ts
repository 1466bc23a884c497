import type { EmbeddedLockService, LockServiceOptions } from "./embedded-lock-service.js";
import { InMemoryLockService } from "./in-memory-lock-service.js";

/**
 * Create the embedded lock service: the whole lock server without HTTP, implementing the
 * protocol's `LockService` (so `LockClient.embedded(service)` and the HTTP layer share it).
 * With `dataDir`, timestamps and fencing tokens continue above every number handed out by an
 * earlier process on the same directory, even one that crashed. Call `close()` to stop it: waiting
 * lock requests then fail with `UNAVAILABLE` and the timestamp bound is persisted.
 *
 * Throws at once (a `RangeError`, or the error reading a corrupt bound file) when the options
 * cannot give a correct service.
 */
export function createLockService(options: LockServiceOptions = {}): EmbeddedLockService {
  return new InMemoryLockService(options);
}
