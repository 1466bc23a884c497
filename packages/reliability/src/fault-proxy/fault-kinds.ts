/** What the fault proxy can do to a chunk, as a constant list so counts and reports cover every kind. */
export const FAULT_KINDS = ["delay", "drop", "truncate", "reset"] as const;

/**
 * One kind of fault:
 * - `delay`: the chunk (and, to keep order, everything after it in that direction) is held for a
 *   random number of ms, then forwarded;
 * - `drop`: the chunk is swallowed and the connection becomes a black hole: nothing more is
 *   forwarded either way, nothing is closed, and when the client side closes the server side is
 *   kept open for a random linger time (the server hears of it late, as behind a dead middlebox);
 * - `truncate`: a strict prefix of the chunk (possibly empty) is forwarded, then both sides are
 *   closed with a FIN;
 * - `reset`: the chunk is not forwarded and both sides are destroyed with an RST
 *   (`socket.resetAndDestroy()`).
 */
export type FaultKind = (typeof FAULT_KINDS)[number];

/** The two directions of a proxied connection. */
export const DIRECTIONS = ["toServer", "toClient"] as const;

/** `toServer`: bytes the client sent (requests); `toClient`: bytes the server sent (answers). */
export type Direction = (typeof DIRECTIONS)[number];

/**
 * Probability of each fault per chunk in one direction. Missing kinds are 0; the sum must be at
 * most 1 (the rest of the time the chunk is forwarded untouched).
 */
export type FaultRates = Readonly<Partial<Record<FaultKind, number>>>;

/** One fault the proxy injected, for logs and replay checks. */
export interface FaultEvent {
  /** Connection number, in accept order from 0. */
  readonly connection: number;
  readonly direction: Direction;
  /** Index of the chunk within its direction of the connection, from 0. */
  readonly chunk: number;
  readonly kind: FaultKind;
  /** `delay`: the ms held; `truncate`: the bytes forwarded; otherwise 0. */
  readonly amount: number;
}

/** What the proxy has done so far. */
export interface FaultCounts {
  /** Client connections accepted. */
  readonly connections: number;
  /** Chunks seen per direction (faulty or not). */
  readonly chunks: Readonly<Record<Direction, number>>;
  /** Faults injected per direction and kind. */
  readonly faults: Readonly<Record<Direction, Readonly<Record<FaultKind, number>>>>;
  /** All faults injected, every direction and kind. */
  readonly total: number;
}

/** Zero counts for every kind. */
export function emptyKindCounts(): Record<FaultKind, number> {
  return { delay: 0, drop: 0, truncate: 0, reset: 0 };
}

/**
 * Pick the fault for one chunk from a uniform draw `u` in [0, 1): the kinds take consecutive slices
 * of [0, 1) in {@link FAULT_KINDS} order, sized by their rates; past them, no fault.
 */
export function pickFault(rates: FaultRates, u: number): FaultKind | undefined {
  let edge = 0;
  for (const kind of FAULT_KINDS) {
    edge += rates[kind] ?? 0;
    if (u < edge) return kind;
  }
  return undefined;
}

/** Throw a `RangeError` unless every rate is in [0, 1] and they sum to at most 1. */
export function checkRates(rates: FaultRates, what: string): void {
  let sum = 0;
  for (const kind of FAULT_KINDS) {
    const r = rates[kind] ?? 0;
    if (!(r >= 0 && r <= 1)) throw new RangeError(`${what}.${kind} must be in [0, 1] (got ${r})`);
    sum += r;
  }
  if (sum > 1 + 1e-9) throw new RangeError(`${what}: the rates sum to ${sum}, more than 1`);
}
