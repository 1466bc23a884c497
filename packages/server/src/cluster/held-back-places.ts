/**
 * One held-back request's place in its namespace's line, as a hand-over carries it (DESIGN.md
 * "Hand-over with state": the taker keeps each waiter's place for its re-sent `requestId`). A term
 * inside its lease-wait holds its lock requests in these lines, outside the engine, so the
 * engine's replicated waiters never hold them.
 */
export interface HeldBackPlace {
  /** The request's `requestId` (a request without one cannot be claimed, so it is not carried). */
  readonly requestId: string;
  /** Time left to the request's own deadline when the place was taken, in whole milliseconds. */
  readonly remainingMs: number;
}

/** Held-back places per namespace, each line in first-in-first-out order. */
export type HeldBackPlaces = Readonly<Record<string, readonly HeldBackPlace[]>>;

/** `value` as {@link HeldBackPlaces}, checked (it crossed the replication stream); throws when malformed. */
export function parseHeldBackPlaces(value: unknown): HeldBackPlaces {
  const bad = (): never => {
    throw new Error("a hand-over entry's heldBack must be { <namespace>: [{ requestId: <string>, remainingMs: <non-negative number> }] }");
  };
  if (typeof value !== "object" || value === null || Array.isArray(value)) return bad();
  const out: Record<string, HeldBackPlace[]> = {};
  for (const [namespace, line] of Object.entries(value)) {
    if (!Array.isArray(line)) return bad();
    out[namespace] = line.map((place: unknown) => {
      const p = place as Partial<HeldBackPlace> | null;
      if (typeof p !== "object" || p === null || typeof p.requestId !== "string" || typeof p.remainingMs !== "number" || !Number.isFinite(p.remainingMs) || p.remainingMs < 0) return bad();
      return { requestId: p.requestId, remainingMs: p.remainingMs };
    });
  }
  return out;
}

/** `places` as they stand `elapsedMs` later: each deadline nearer, those past it dropped, empty lines dropped. */
export function agePlaces(places: HeldBackPlaces, elapsedMs: number): HeldBackPlaces {
  const out: Record<string, HeldBackPlace[]> = {};
  for (const [namespace, line] of Object.entries(places)) {
    const left = line.map((p) => ({ requestId: p.requestId, remainingMs: Math.floor(p.remainingMs - elapsedMs) })).filter((p) => p.remainingMs > 0);
    if (left.length > 0) out[namespace] = left;
  }
  return out;
}
