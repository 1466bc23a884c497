/**
 * How a committed transaction releases its locks:
 * - `async`: one `tryUnlock` of the commit locks and the immutable-timestamp lock together; the
 *   commit returns at once and the client's batched unlocker sends them (AtlasDB ADR 15).
 * - `sync`: two awaited `unlock` calls, commit locks then the immutable-timestamp lock, as AtlasDB
 *   did before; only for measuring what `async` saves.
 */
export const UNLOCK_MODES = ["async", "sync"] as const;

/** One of {@link UNLOCK_MODES}. */
export type UnlockMode = (typeof UNLOCK_MODES)[number];
