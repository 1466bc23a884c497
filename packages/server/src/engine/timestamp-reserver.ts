/**
 * Where the lock engine's per-namespace counters get their durable bound from. The engine is pure:
 * it calls {@link TimestampReserver.reserve} synchronously, and only when the range it reserved
 * before runs out, so any I/O stays behind this interface and off the hot path.
 */
export interface TimestampReserver {
  /**
   * The highest number a namespace may have handed out before this process started (0 if none).
   * A namespace's counter resumes at `floor + 1`.
   */
  floor(namespace: string): number;
  /**
   * Make every number up to `upTo` safe to hand out in `namespace`, durably, before returning.
   * Returns the new bound, at least `upTo` (usually well above it, so the next call is far away).
   * Throws when the bound cannot be made durable; the engine then hands nothing out.
   */
  reserve(namespace: string, upTo: number): number;
  /** Write the current bounds again (on close). A no-op for reservers without storage. */
  persist(): void;
}

/**
 * A reserver without storage: counters start at 1 with every process and never need to reserve.
 * This is what a service without a data directory uses.
 */
export function createMemoryTimestampReserver(): TimestampReserver {
  return {
    floor: () => 0,
    reserve: () => Number.MAX_SAFE_INTEGER,
    persist: () => undefined,
  };
}
